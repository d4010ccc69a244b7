/* SPDX-License-Identifier: BSD-3-Clause
 * Results of a run: human-readable lines or one JSON object. Scripts read
 * the JSON; its keys are the interface and only ever grow.
 */
#include <inttypes.h>
#include <math.h>

#include "lg.h"

static const char *
arrival_name(enum lg_arrival a)
{
	return a == LG_ARRIVAL_FIXED ? "fixed" : "poisson";
}

/* JSON has no NaN or infinity; a zero-length run must still parse. */
static double
finite_or_zero(double v)
{
	return isfinite(v) ? v : 0.0;
}

/* Latency in microseconds with a sensible number of digits. */
static void
put_us(FILE *f, const char *name, uint64_t ns)
{
	fprintf(f, "  %s %.1f us", name, (double)ns / 1e3);
}

void
lg_report_human(FILE *f, const struct lg_opts *o, const struct lg_result *r)
{
	const struct lg_phase_counts *m = &r->measured;
	const struct tlb_hist *h = r->hist;

	fprintf(f,
		"rate: target %.0f rps, achieved %.1f rps, responses %.1f rps "
		"over %.3f s%s\n",
		r->target_rps, finite_or_zero(r->achieved_rps),
		finite_or_zero(r->received_rps), r->measured_s,
		r->interrupted ? " (interrupted)" : "");
	fprintf(f, "load: %s arrivals, hint %s, class %u, %u bytes in %u "
		   "packet%s, %u flows\n",
		arrival_name(o->arrival), o->dist_spec, o->svc_class, o->size,
		lg_pkts_per_msg(o->size, o->mtu),
		lg_pkts_per_msg(o->size, o->mtu) == 1 ? "" : "s", o->flows);
	fprintf(f,
		"requests: sent %" PRIu64 ", received %" PRIu64
		", errors %" PRIu64 ", lost %" PRIu64 " (late %" PRIu64 ")\n",
		m->sent, m->received, m->errors, m->lost, m->late);
	if (r->warmup.sent != 0)
		fprintf(f,
			"warm-up: sent %" PRIu64 ", received %" PRIu64
			", errors %" PRIu64 ", lost %" PRIu64 "\n",
			r->warmup.sent, r->warmup.received, r->warmup.errors,
			r->warmup.lost);
	fprintf(f, "latency:");
	put_us(f, "p50", tlb_hist_quantile(h, 0.50));
	put_us(f, "p90", tlb_hist_quantile(h, 0.90));
	put_us(f, "p99", tlb_hist_quantile(h, 0.99));
	put_us(f, "p99.9", tlb_hist_quantile(h, 0.999));
	put_us(f, "max", h->max);
	fprintf(f, "  mean %.1f us\n", tlb_hist_mean(h) / 1e3);
	fprintf(f,
		"anomalies: duplicates %" PRIu64 ", unknown %" PRIu64
		", parse errors %" PRIu64 ", other rx %" PRIu64
		", evicted %" PRIu64 ", ts mismatch %" PRIu64 "\n",
		r->duplicates, r->unknown, r->parse_errors, r->rx_other,
		r->evicted, r->ts_mismatch);
	fprintf(f,
		"sender: %s, max lag %.1f us, %" PRIu64
		" requests over %u us late, tx stalls %" PRIu64
		", tx dropped %" PRIu64 "%s\n",
		r->behind ? "BEHIND SCHEDULE" : "on schedule",
		(double)r->max_lag_ns / 1e3, r->late_sends, o->max_lag_us,
		r->tx_stalls, r->tx_dropped,
		r->tx_gave_up ? ", STOPPED: port took nothing" : "");
	fprintf(f, "per core:");
	for (uint32_t c = 0; c < r->n_cores; c++)
		fprintf(f, " %u:%" PRIu64, c, r->per_core[c]);
	fprintf(f, "%s\n", r->n_cores == 0 ? " -" : "");
}

static void
put_phase(FILE *f, const struct lg_phase_counts *p)
{
	fprintf(f,
		"\"sent\":%" PRIu64 ",\"received\":%" PRIu64
		",\"errors\":%" PRIu64 ",\"lost\":%" PRIu64
		",\"late\":%" PRIu64,
		p->sent, p->received, p->errors, p->lost, p->late);
}

/* The spec strings come from tlb_dist_format, but quote defensively. */
static void
put_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

void
lg_report_json(FILE *f, const struct lg_opts *o, const struct lg_result *r)
{
	const struct tlb_hist *h = r->hist;

	fprintf(f, "{\"target_rps\":%.3f,\"achieved_rps\":%.3f,"
		   "\"received_rps\":%.3f,\"duration_s\":%.6f,"
		   "\"warmup_s\":%.6f,",
		r->target_rps, finite_or_zero(r->achieved_rps),
		finite_or_zero(r->received_rps), finite_or_zero(r->measured_s),
		o->warmup_s);
	fprintf(f, "\"arrival\":\"%s\",\"dist\":", arrival_name(o->arrival));
	put_str(f, o->dist_spec);
	fprintf(f, ",\"class\":%u,\"size\":%u,\"pkts_per_req\":%u,"
		   "\"flows\":%u,",
		o->svc_class, o->size, lg_pkts_per_msg(o->size, o->mtu),
		o->flows);
	put_phase(f, &r->measured);
	fprintf(f,
		",\"duplicates\":%" PRIu64 ",\"unknown\":%" PRIu64
		",\"parse_errors\":%" PRIu64 ",\"rx_other\":%" PRIu64
		",\"rx_extra_pkts\":%" PRIu64 ",\"evicted\":%" PRIu64
		",\"ts_mismatch\":%" PRIu64 ",",
		r->duplicates, r->unknown, r->parse_errors, r->rx_other,
		r->rx_extra_pkts, r->evicted, r->ts_mismatch);
	fprintf(f,
		"\"p50_ns\":%" PRIu64 ",\"p90_ns\":%" PRIu64
		",\"p99_ns\":%" PRIu64 ",\"p999_ns\":%" PRIu64
		",\"max_ns\":%" PRIu64 ",\"min_ns\":%" PRIu64
		",\"mean_ns\":%.1f,",
		tlb_hist_quantile(h, 0.50), tlb_hist_quantile(h, 0.90),
		tlb_hist_quantile(h, 0.99), tlb_hist_quantile(h, 0.999), h->max,
		h->min, finite_or_zero(tlb_hist_mean(h)));
	fprintf(f,
		"\"behind\":%s,\"max_lag_ns\":%" PRIu64
		",\"late_sends\":%" PRIu64 ",\"tx_pkts\":%" PRIu64
		",\"tx_stalls\":%" PRIu64 ",\"tx_dropped\":%" PRIu64
		",\"tx_gave_up\":%s,\"interrupted\":%s,",
		r->behind ? "true" : "false", r->max_lag_ns, r->late_sends,
		r->tx_pkts, r->tx_stalls, r->tx_dropped,
		r->tx_gave_up ? "true" : "false",
		r->interrupted ? "true" : "false");
	fprintf(f, "\"warmup\":{");
	put_phase(f, &r->warmup);
	fprintf(f, "},\"per_core\":[");
	for (uint32_t c = 0; c < r->n_cores; c++)
		fprintf(f, "%s%" PRIu64, c == 0 ? "" : ",", r->per_core[c]);
	fprintf(f, "]}\n");
}
