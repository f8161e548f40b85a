/* bench_contract: agentwire's side of the contract benchmark (issue 5).
 *
 *   bench_contract DATA_DIR
 *
 * Writes DATA_DIR/llmResponse-10KB.xml: a 10 KB <llmResponse> (fixed text),
 * valid per contracts/llmResponse.json and laid out as the seed's example
 * (two-space indent): a long <response> of prose with entities (&amp; &lt;
 * &gt; &quot;) and non-ASCII text, three subjects (the most the contract
 * allows) with ten keywords each (the most allowed), isNew both ways, and a
 * <summaryUpdate>. The JavaScript peer (bench/peers/contract_peer.js) reads
 * the same file.
 *
 * Measures, with the built-in llmResponse contract loaded once (not timed):
 *   parse: aw_contract_parse (expat, the contract's rules, the typed JSON
 *          result) + aw_json_doc_free;
 *   validate: aw_contract_validate alone (no JSON result).
 * Each is run ITER times in a row, 7 batches; the best batch's mean, in µs
 * per document, by the clock and by the process's CPU time. Writes the typed result as JSON to DATA_DIR/llmResponse-aw.json
 * for the peer to compare with its own (untimed), and prints "key value"
 * lines (bench/run_contract.sh makes the rows). Times come from
 * clock_gettime(CLOCK_MONOTONIC). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agentwire/agentwire.h"
#include "bench_util.h"

#define ITER 4000
#define BATCHES 7
#define TARGET_BYTES 10240

/* The sentences the response is made of, already XML-escaped. */
static const char *const sentences[] = {
    "For college savings, financial advisors often recommend 529 plans.",
    "They offer tax advantages and can be used for qualified education expenses.",
    "The amount to save depends on factors like the current age of your children, expected college costs, and your timeframe.",
    "A common rule of thumb is to aim for about one third of projected costs from savings, one third from current income &amp; one third from aid or loans.",
    "If tuition grows at 5% a year and your child is 4, costs in 14 years will be roughly double today&apos;s \xE2\x80\x94 so starting early matters.",
    "Compare the plan&apos;s fees: an expense ratio &lt; 0.2% is good, while anything &gt; 1% eats into returns.",
    "Some states give a deduction for contributions (&quot;in-state&quot; plans only), which is worth checking before you pick one.",
    "Grandparents can contribute too; since 2024, their 529 distributions no longer count against federal aid eligibility.",
    "Unused funds can be moved to a sibling, or up to $35,000 can roll into a Roth IRA under the newer rules.",
    "Coverdell ESAs and custodial (UTMA/UGMA) accounts are alternatives, each with trade-offs in control &amp; taxes.",
    "Caf\xC3\xA9 owners, freelancers and other self-employed parents can also pair a SEP-IRA with a 529 to balance retirement &amp; education goals.",
    "Remember that financial aid formulas treat parent-owned 529s more favourably than student-owned assets.",
};

static const char *const subject_names[] = {"college-savings", "tax-planning", "family-budget"};
static const char *const subject_descs[] = {
    "Discussion of saving strategies for children&apos;s higher education, including 529 plans &amp; their alternatives",
    "How contributions, deductions and withdrawals are taxed at the federal and state level (&quot;in-state&quot; benefits)",
    "Balancing monthly expenses, emergency funds and long-term goals such as retirement &amp; education",
};
static const char *const terms[] = {
    "529-plan", "tax-advantages", "education-expenses", "financial-planning", "tuition-inflation",
    "expense-ratio", "state-deduction", "roth-rollover", "coverdell-esa", "utma-account",
    "financial-aid", "grandparent-gifts", "emergency-fund", "monthly-budget", "retirement-savings",
    "sep-ira", "custodial-account", "compound-growth", "savings-target", "college-costs",
    "federal-aid", "contribution-limit", "gift-tax", "beneficiary-change", "qualified-expenses",
    "age-based-portfolio", "dollar-cost-averaging", "index-funds", "fee-comparison", "scholarships",
};

static size_t response_bytes; /* the escaped text of <response> */

static void make_document(aw_buf *b) {
    aw_buf tail;
    aw_buf_init(&tail, NULL);
    bench_put(&tail, "</response>\n  <analysis>\n");
    for (int s = 0; s < 3; s++) {
        BENCH_PUTF(&tail, "    <subject name=\"%s\" description=\"%s\" isNew=\"%s\">\n", subject_names[s], subject_descs[s],
             s == 1 ? "false" : "true");
        for (int k = 0; k < 10; k++)
            BENCH_PUTF(&tail, "      <keyword term=\"%s\" confidence=\"0.%02d\" />\n", terms[s * 10 + k], 95 - 3 * k);
        bench_put(&tail, "    </subject>\n");
    }
    bench_put(&tail, "    <summaryUpdate>User asked how much to save for college. Assistant explained 529 plans, their tax "
               "advantages &amp; fees, state deductions, aid rules and alternatives, and said the target depends on the "
               "children&apos;s ages and expected costs.</summaryUpdate>\n  </analysis>\n</llmResponse>\n");
    aw_buf_clear(b);
    bench_put(b, "<llmResponse>\n  <response>");
    /* prose up to the size, whole sentences, a paragraph break now and then */
    size_t i = 0;
    while (b->len + tail.len + 1 < TARGET_BYTES) {
        const char *s = sentences[i % (sizeof sentences / sizeof sentences[0])];
        if (b->len + tail.len + strlen(s) + 1 >= TARGET_BYTES) break;
        if (i) bench_put(b, i % 5 == 0 ? "\n\n" : " ");
        bench_put(b, s);
        i++;
    }
    response_bytes = b->len - strlen("<llmResponse>\n  <response>");
    if (aw_buf_append(b, tail.data, tail.len)) bench_oom();
    aw_buf_free(&tail);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: bench_contract DATA_DIR\n");
        return 2;
    }
    char path[4096];
    aw_buf xml;
    aw_buf_init(&xml, NULL);
    make_document(&xml);
    snprintf(path, sizeof path, "%s/llmResponse-10KB.xml", argv[1]);
    bench_write_file(path, xml.data, xml.len);

    aw_error err;
    aw_contract *c = NULL;
    if (aw_contract_builtin("llmResponse", NULL, &c, &err)) {
        fprintf(stderr, "bench_contract: %s\n", err.message);
        return 1;
    }
    /* untimed: the document is valid, strictly too, and its typed result */
    aw_contract_issue *issues = NULL;
    size_t nissues = 0;
    aw_contract_options strict = {.strict = true};
    if (aw_contract_validate(c, xml.data, xml.len, &strict, &issues, &nissues, &err)) {
        fprintf(stderr, "bench_contract: the document is not valid (%zu issues)\n", nissues);
        for (size_t i = 0; i < nissues; i++)
            fprintf(stderr, "  %s:%zu:%zu: %s\n", issues[i].path, issues[i].line, issues[i].column, issues[i].message);
        return 1;
    }
    aw_free(NULL, issues);
    aw_json_doc *doc = NULL;
    if (aw_contract_parse(c, xml.data, xml.len, NULL, &doc, &err)) {
        fprintf(stderr, "bench_contract: parse: %s\n", err.message);
        return 1;
    }
    aw_buf json;
    aw_buf_init(&json, NULL);
    if (aw_json_write(aw_json_doc_root(doc), NULL, &json, &err)) bench_oom();
    aw_json_doc_free(doc);
    snprintf(path, sizeof path, "%s/llmResponse-aw.json", argv[1]);
    bench_write_file(path, json.data, json.len);

    /* parse: to the typed JSON result */
    double best = 1e30, best_cpu = 1e30;
    for (int k = 0; k < BATCHES; k++) {
        double c0 = bench_cpu_now();
        double t0 = bench_now();
        for (int i = 0; i < ITER; i++) {
            aw_json_doc *d = NULL;
            if (aw_contract_parse(c, xml.data, xml.len, NULL, &d, &err)) {
                fprintf(stderr, "bench_contract: parse: %s\n", err.message);
                return 1;
            }
            aw_json_doc_free(d);
        }
        double t = (bench_now() - t0) / ITER, cpu = (bench_cpu_now() - c0) / ITER;
        if (t < best) best = t;
        if (cpu < best_cpu) best_cpu = cpu;
    }
    printf("doc_bytes %zu\n", xml.len);
    printf("response_bytes %zu\n", response_bytes);
    printf("aw.parse.us %.3f\n", best * 1e6);
    printf("aw.parse.cpu_us %.3f\n", best_cpu * 1e6);
    printf("aw.parse.mbps %.1f\n", (double)xml.len / best / 1e6);

    /* validate only */
    best = 1e30;
    for (int k = 0; k < BATCHES; k++) {
        double t0 = bench_now();
        for (int i = 0; i < ITER; i++) {
            if (aw_contract_validate(c, xml.data, xml.len, NULL, &issues, &nissues, &err)) {
                fprintf(stderr, "bench_contract: validate failed\n");
                return 1;
            }
            aw_free(NULL, issues);
        }
        double t = (bench_now() - t0) / ITER;
        if (t < best) best = t;
    }
    printf("aw.validate.us %.3f\n", best * 1e6);
    printf("aw.iterations %d\n", ITER);
    aw_contract_free(c);
    aw_buf_free(&json);
    aw_buf_free(&xml);
    return 0;
}
