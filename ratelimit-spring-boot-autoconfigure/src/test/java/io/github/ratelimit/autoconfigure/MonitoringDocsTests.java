package io.github.ratelimit.autoconfigure;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Prometheus alerting rules and the Grafana dashboard in {@code docs/monitoring}: well formed, and every metric
 * and outcome they query is one the starter registers, under the name Micrometer's Prometheus registry gives it.
 * (promtool is not installed on the build machines: its package brings a whole Prometheus server.)
 */
class MonitoringDocsTests {

	private static final Path DOCS = Path.of("..", "docs", "monitoring");

	/** The starter's meters, as Prometheus names them: RateLimitMetrics, the gauges, the decision observation. */
	private static final Set<String> METRICS = Set.of("ratelimit_decisions_total", "ratelimit_store_failures_total",
			"ratelimit_near_limit_total", "ratelimit_shadow_rejections_total", "ratelimit_charges_lost_total",
			"ratelimit_circuit_open", "ratelimit_memory_keys", "ratelimit_decision_seconds_sum",
			"ratelimit_decision_seconds_count", "ratelimit_decision_seconds_max");

	/** The outcomes of ratelimit.decisions (RateLimitMetrics). */
	private static final Set<String> OUTCOMES = Set.of("allowed", "rejected", "rejected_locally",
			"local_fallback_allowed", "local_fallback_rejected", "fail_open", "fail_closed", "shadow_rejected");

	private static final Pattern METRIC = Pattern.compile("\\bratelimit_[a-z_]+");

	private static final Pattern OUTCOME = Pattern.compile("outcome[!=]~?\"([a-z_|]+)\"");

	@Test
	@SuppressWarnings("unchecked")
	void theAlertingRulesAreWellFormedAndQueryOnlyTheStartersMetrics() throws IOException {
		Map<String, Object> rules = new Yaml().load(Files.readString(DOCS.resolve("prometheus-rules.yml")));
		List<Map<String, Object>> groups = (List<Map<String, Object>>) rules.get("groups");
		assertThat(groups).isNotEmpty();
		List<String> alerts = new ArrayList<>();
		for (Map<String, Object> group : groups) {
			assertThat(group.get("name")).isInstanceOf(String.class);
			for (Map<String, Object> rule : (List<Map<String, Object>>) group.get("rules")) {
				String alert = (String) rule.get("alert");
				alerts.add(alert);
				String expr = (String) rule.get("expr");
				assertQueriesTheStartersMetrics(alert, expr);
				assertThat(Duration.parse("PT" + ((String) rule.get("for")).toUpperCase())).as(alert).isPositive();
				assertThat((Map<String, Object>) rule.get("labels")).as(alert).containsKey("severity");
				assertThat((Map<String, Object>) rule.get("annotations")).as(alert).containsKey("summary");
			}
		}
		assertThat(alerts).as("rejection ratio, fail-open decisions, open circuit breakers").contains(
				"RateLimitRejectionRatioHigh", "RateLimitFailingOpen", "RateLimitCircuitBreakerOpen");
	}

	@Test
	@SuppressWarnings("unchecked")
	void theDashboardIsValidJsonWhosePanelsQueryOnlyTheStartersMetrics() throws IOException {
		Map<String, Object> dashboard = new Yaml().load(Files.readString(DOCS.resolve("grafana-dashboard.json")));
		assertThat(dashboard.get("title")).isEqualTo("Rate limits");
		List<Map<String, Object>> panels = (List<Map<String, Object>>) dashboard.get("panels");
		assertThat(panels).hasSizeGreaterThanOrEqualTo(6);
		for (Map<String, Object> panel : panels) {
			for (Map<String, Object> target : (List<Map<String, Object>>) panel.get("targets")) {
				assertQueriesTheStartersMetrics((String) panel.get("title"), (String) target.get("expr"));
			}
		}
		Map<String, Object> templating = (Map<String, Object>) dashboard.get("templating");
		assertThat((List<Map<String, Object>>) templating.get("list")).extracting((variable) -> variable.get("name"))
			.contains("job", "policy");
	}

	private static void assertQueriesTheStartersMetrics(String name, String expr) {
		assertThat(balanced(expr)).as("%s: brackets balanced in %s", name, expr).isTrue();
		Matcher metrics = METRIC.matcher(expr);
		int found = 0;
		while (metrics.find()) {
			assertThat(METRICS).as("%s queries %s", name, metrics.group()).contains(metrics.group());
			found++;
		}
		assertThat(found).as(name).isPositive();
		Matcher outcomes = OUTCOME.matcher(expr);
		while (outcomes.find()) {
			for (String outcome : outcomes.group(1).split("\\|")) {
				assertThat(OUTCOMES).as("%s names outcome %s", name, outcome).contains(outcome);
			}
		}
	}

	private static boolean balanced(String expr) {
		int round = 0;
		int curly = 0;
		int square = 0;
		boolean quoted = false;
		for (char c : expr.toCharArray()) {
			if (c == '"') {
				quoted = !quoted;
			}
			if (quoted) {
				continue;
			}
			round += (c == '(') ? 1 : (c == ')') ? -1 : 0;
			curly += (c == '{') ? 1 : (c == '}') ? -1 : 0;
			square += (c == '[') ? 1 : (c == ']') ? -1 : 0;
			if (round < 0 || curly < 0 || square < 0) {
				return false;
			}
		}
		return round == 0 && curly == 0 && square == 0 && !quoted;
	}

}
