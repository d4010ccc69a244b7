/* SPDX-License-Identifier: BSD-3-Clause
 * Small, fast, seedable PRNG (xoshiro256** seeded through splitmix64) for
 * policies, the load generator and the simulator. Not for cryptography.
 */
#ifndef TURBOLB_RNG_H
#define TURBOLB_RNG_H

#include <stdint.h>

struct tlb_rng {
	uint64_t s[4];
};

static inline uint64_t
tlb_splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static inline void
tlb_rng_seed(struct tlb_rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = tlb_splitmix64(&seed);
}

static inline uint64_t
tlb_rng_rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static inline uint64_t
tlb_rng_next(struct tlb_rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = tlb_rng_rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = tlb_rng_rotl(s[3], 45);
	return result;
}

/* Uniform in [0, n) without modulo bias worth speaking of (Lemire). */
static inline uint32_t
tlb_rng_below(struct tlb_rng *r, uint32_t n)
{
	return (uint32_t)(((tlb_rng_next(r) >> 32) * (uint64_t)n) >> 32);
}

/* Uniform in (0, 1]: never 0, so log() of it is finite. */
static inline double
tlb_rng_unit(struct tlb_rng *r)
{
	return ((tlb_rng_next(r) >> 11) + 1) * (1.0 / 9007199254740992.0);
}

#endif /* TURBOLB_RNG_H */
