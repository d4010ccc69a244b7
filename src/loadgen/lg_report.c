/* SPDX-License-Identifier: BSD-3-Clause
 * Results of a run: human-readable lines, a table, JSON objects and CSV
 * rows. Scripts read the JSON and the CSV; JSON keys and the CSV columns
 * are the interface and only ever grow (CSV columns only at the end).
 */
#include <inttypes.h>
#include <math.h>

#include "lg.h"

static const char *
arrival_name(enum lg_arrival a)
{
	switch (a) {
	case LG_ARRIVAL_FIXED:
		return "fixed";
	case LG_ARRIVAL_CLOSED:
		return "closed";
	default:
		return "poisson";
	}
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

	if (o->arrival == LG_ARRIVAL_CLOSED)
		fprintf(f, "rate: closed loop, window %u", o->window);
	else
		fprintf(f, "rate: target %.0f rps", r->target_rps);
	fprintf(f, ", achieved %.1f rps, responses %.1f rps over %.3f s%s\n",
		finite_or_zero(r->achieved_rps),
		finite_or_zero(r->received_rps), r->measured_s,
		r->interrupted ? " (interrupted)" : "");
	fprintf(f,
		"load: %s arrivals, hint %s, class %u, %u bytes in %u "
		"packet%s, %u flows",
		arrival_name(o->arrival), o->dist_spec, o->svc_class, o->size,
		lg_pkts_per_msg(o->size, o->mtu),
		lg_pkts_per_msg(o->size, o->mtu) == 1 ? "" : "s", o->flows);
	if (o->src_ips > 1)
		fprintf(f, " x %u source addresses", o->src_ips);
	fprintf(f, "%s%s\n", o->label[0] != '\0' ? ", policy " : "", o->label);
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
	if (r->link_downs != 0)
		fprintf(f,
			"link: down %" PRIu64 " times, port restarted %" PRIu64
			" times, %" PRIu64 " requests written off, %" PRIu64
			" skipped while down\n",
			r->link_downs, r->port_restarts,
			r->measured.written_off + r->warmup.written_off,
			r->link_skipped);
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
		",\"errors\":%" PRIu64 ",\"lost\":%" PRIu64 ",\"late\":%" PRIu64
		",\"written_off\":%" PRIu64,
		p->sent, p->received, p->errors, p->lost, p->late,
		p->written_off);
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

	fprintf(f, "{\"record\":\"point\",\"policy\":");
	put_str(f, o->label);
	fprintf(f, ",\"point\":%u,\"offered_rps\":%.3f,", r->point,
		r->target_rps);
	fprintf(f,
		"\"target_rps\":%.3f,\"achieved_rps\":%.3f,"
		"\"received_rps\":%.3f,\"duration_s\":%.6f,"
		"\"warmup_s\":%.6f,",
		r->target_rps, finite_or_zero(r->achieved_rps),
		finite_or_zero(r->received_rps), finite_or_zero(r->measured_s),
		o->warmup_s);
	fprintf(f, "\"arrival\":\"%s\",\"dist\":", arrival_name(o->arrival));
	put_str(f, o->dist_spec);
	fprintf(f,
		",\"class\":%u,\"size\":%u,\"pkts_per_req\":%u,"
		"\"flows\":%u,\"src_ips\":%u,\"closed_loop\":%u,",
		o->svc_class, o->size, lg_pkts_per_msg(o->size, o->mtu),
		o->flows, o->src_ips, o->window);
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
	fprintf(f,
		"\"link_downs\":%" PRIu64 ",\"port_restarts\":%" PRIu64
		",\"link_skipped\":%" PRIu64 ",\"first_link_down\":",
		r->link_downs, r->port_restarts, r->link_skipped);
	if (r->first_down.valid)
		fprintf(f,
			"{\"sent\":%" PRIu64 ",\"answered\":%" PRIu64
			",\"lost\":%" PRIu64 ",\"tx_pkts\":%" PRIu64
			",\"tx_dropped\":%" PRIu64 ",\"written_off\":%" PRIu64
			"},",
			r->first_down.sent, r->first_down.answered,
			r->first_down.lost, r->first_down.tx_pkts,
			r->first_down.tx_dropped, r->first_down.written_off);
	else
		fprintf(f, "null,");
	fprintf(f, "\"warmup\":{");
	put_phase(f, &r->warmup);
	fprintf(f, "},\"per_core\":[");
	for (uint32_t c = 0; c < r->n_cores; c++)
		fprintf(f, "%s%" PRIu64, c == 0 ? "" : ",", r->per_core[c]);
	fprintf(f, "]}\n");
}

/* Why a row deserves a second look, in a few words. */
static void
put_notes(FILE *f, const struct lg_result *r)
{
	bool any = false;

#define NOTE(cond, ...)                                                        \
	do {                                                                   \
		if (cond) {                                                    \
			fputs(any ? "," : " ", f);                             \
			fprintf(f, __VA_ARGS__);                               \
			any = true;                                            \
		}                                                              \
	} while (0)
	NOTE(r->behind, "BEHIND");
	NOTE(r->tx_gave_up, "tx-stopped");
	NOTE(r->link_downs != 0, "link-down=%" PRIu64, r->link_downs);
	NOTE(r->interrupted, "interrupted");
	NOTE(r->measured.errors != 0, "errors=%" PRIu64, r->measured.errors);
	NOTE(r->measured.late != 0, "late=%" PRIu64, r->measured.late);
	NOTE(r->duplicates != 0, "dup=%" PRIu64, r->duplicates);
	NOTE(r->unknown != 0, "unknown=%" PRIu64, r->unknown);
	NOTE(r->evicted != 0, "evicted=%" PRIu64, r->evicted);
	NOTE(r->ts_mismatch != 0, "ts-mismatch=%" PRIu64, r->ts_mismatch);
#undef NOTE
	if (!any)
		fprintf(f, " -");
}

void
lg_table_header(FILE *f)
{
	fprintf(f, "%-10s %10s %10s %9s %9s %9s %9s %9s %9s %9s %7s notes\n",
		"policy", "offered", "achieved", "p50_us", "p90_us", "p99_us",
		"p99.9_us", "max_us", "mean_us", "sent", "lost");
}

void
lg_table_row(FILE *f, const struct lg_opts *o, const struct lg_result *r)
{
	const struct tlb_hist *h = r->hist;

	fprintf(f,
		"%-10s %10.0f %10.0f %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f "
		"%9" PRIu64 " %7" PRIu64,
		o->label[0] != '\0' ? o->label : "-", r->target_rps,
		finite_or_zero(r->achieved_rps),
		(double)tlb_hist_quantile(h, 0.50) / 1e3,
		(double)tlb_hist_quantile(h, 0.90) / 1e3,
		(double)tlb_hist_quantile(h, 0.99) / 1e3,
		(double)tlb_hist_quantile(h, 0.999) / 1e3, (double)h->max / 1e3,
		finite_or_zero(tlb_hist_mean(h)) / 1e3, r->measured.sent,
		r->measured.lost);
	put_notes(f, r);
	fputc('\n', f);
}

void
lg_csv_header(FILE *f)
{
	fprintf(f, "policy,offered_rps,achieved_rps,p50_ns,p90_ns,p99_ns,"
		   "p999_ns,max_ns,lost,sent,received,errors,late,mean_ns,"
		   "received_rps,duration_s,behind,point,arrival,window,dist,"
		   "duplicates,unknown\n");
}

/* Labels are checked to need no quoting (lg_opts.c), dist specs have no
 * commas: every field goes out as it is. */
void
lg_csv_row(FILE *f, const struct lg_opts *o, const struct lg_result *r)
{
	const struct tlb_hist *h = r->hist;
	const struct lg_phase_counts *m = &r->measured;

	fprintf(f,
		"%s,%.3f,%.3f,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
		",%" PRIu64 ",%" PRIu64 ",",
		o->label, r->target_rps, finite_or_zero(r->achieved_rps),
		tlb_hist_quantile(h, 0.50), tlb_hist_quantile(h, 0.90),
		tlb_hist_quantile(h, 0.99), tlb_hist_quantile(h, 0.999), h->max,
		m->lost);
	fprintf(f,
		"%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
		",%.1f,%.3f,%.6f,%d,%u,%s,%u,%s,%" PRIu64 ",%" PRIu64 "\n",
		m->sent, m->received, m->errors, m->late,
		finite_or_zero(tlb_hist_mean(h)),
		finite_or_zero(r->received_rps), finite_or_zero(r->measured_s),
		r->behind ? 1 : 0, r->point, arrival_name(o->arrival),
		o->window, o->dist_spec, r->duplicates, r->unknown);
}

void
lg_slo_report_human(FILE *f, const struct lg_opts *o,
		    const struct lg_slo_result *s)
{
	fprintf(f, "SLO: p99 <= %g x mean of %s = %.1f us, nothing lost",
		o->slo_multiple, o->dist_spec, s->slo_ns / 1e3);
	if (o->label[0] != '\0')
		fprintf(f, ", policy %s", o->label);
	fprintf(f, "\n");
	if (!s->found) {
		fprintf(f, "SLO: not met at the lowest rate, %.0f rps",
			o->rate_min);
	} else {
		fprintf(f,
			"SLO: max %.0f rps achieved (offered %.0f, p99 %.1f "
			"us) after %u points; ",
			s->max_rps, s->best_offered_rps, s->best_p99_ns / 1e3,
			s->points);
		if (s->at_max)
			fprintf(f, "met at the upper bound, the answer may "
				   "lie above it");
		else
			fprintf(f, "met at %.0f, missed at %.0f offered",
				s->pass_rps, s->fail_rps);
	}
	fprintf(f, "%s\n", s->aborted ? " (interrupted)" : "");
}

void
lg_slo_report_json(FILE *f, const struct lg_opts *o,
		   const struct lg_slo_result *s)
{
	fprintf(f, "{\"record\":\"slo\",\"policy\":");
	put_str(f, o->label);
	fprintf(f,
		",\"slo_multiple\":%g,\"slo_ns\":%.1f,\"max_rps\":%.3f,"
		"\"found\":%s,\"at_max\":%s,\"best_offered_rps\":%.3f,"
		"\"best_p99_ns\":%.0f,\"pass_rps\":%.3f,\"fail_rps\":%.3f,"
		"\"points\":%u,\"rate_min\":%.3f,\"rate_max\":%.3f,"
		"\"iterations\":%u,\"aborted\":%s,\"dist\":",
		o->slo_multiple, s->slo_ns, s->max_rps,
		s->found ? "true" : "false", s->at_max ? "true" : "false",
		s->best_offered_rps, s->best_p99_ns, s->pass_rps, s->fail_rps,
		s->points, o->rate_min, o->rate_max, o->slo_iterations,
		s->aborted ? "true" : "false");
	put_str(f, o->dist_spec);
	fprintf(f, "}\n");
}

void
lg_slo_csv_header(FILE *f)
{
	fprintf(f, "policy,slo_multiple,slo_ns,max_rps,found,at_max,"
		   "best_offered_rps,best_p99_ns,pass_rps,fail_rps,points,"
		   "rate_min,rate_max,aborted,dist\n");
}

void
lg_slo_csv_row(FILE *f, const struct lg_opts *o, const struct lg_slo_result *s)
{
	fprintf(f,
		"%s,%g,%.1f,%.3f,%d,%d,%.3f,%.0f,%.3f,%.3f,%u,%.3f,%.3f,%d,"
		"%s\n",
		o->label, o->slo_multiple, s->slo_ns, s->max_rps,
		s->found ? 1 : 0, s->at_max ? 1 : 0, s->best_offered_rps,
		s->best_p99_ns, s->pass_rps, s->fail_rps, s->points,
		o->rate_min, o->rate_max, s->aborted ? 1 : 0, o->dist_spec);
}
