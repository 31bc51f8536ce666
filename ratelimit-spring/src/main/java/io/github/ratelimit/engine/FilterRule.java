package io.github.ratelimit.engine;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.springframework.http.server.PathContainer;
import org.springframework.web.util.pattern.PathPattern;

/**
 * One filter of the filter layer, ready to match requests: where it applies and the policy it enforces, with the
 * shared policies it draws.
 *
 * @param name the filter's name
 * @param patterns the paths it applies to
 * @param methods the HTTP methods it applies to, or empty for all
 * @param spec its policy
 * @param shared the shared policies requests it applies to draw
 */
record FilterRule(String name, List<PathPattern> patterns, Set<String> methods, PolicySpec spec,
		List<PolicySpec> shared) {

	private static final PolicySpec[] NO_SPECS = new PolicySpec[0];

	/** Whether it applies to the method: Spring answers HEAD with the GET handler, so a filter on GET applies too. */
	boolean appliesTo(String method) {
		return this.methods.isEmpty() || this.methods.contains(method)
				|| ("HEAD".equals(method) && this.methods.contains("GET"));
	}

	boolean matches(PathContainer path) {
		for (PathPattern pattern : this.patterns) {
			if (pattern.matches(path)) {
				return true;
			}
		}
		return false;
	}

	/** Whether any filter applies to a request: one that does not pays for nothing of the filter layer. */
	static boolean anyApplies(List<FilterRule> rules, String method, List<PathContainer> paths) {
		for (FilterRule rule : rules) {
			if (rule.appliesTo(method) && matchesAny(rule, paths)) {
				return true;
			}
		}
		return false;
	}

	/** The policies of every filter that applies, then the shared ones they draw, each once. */
	static PolicySpec[] specsFor(List<FilterRule> rules, String method, List<PathContainer> paths) {
		if (rules.isEmpty()) {
			return NO_SPECS;
		}
		Map<String, PolicySpec> specs = null;
		for (FilterRule rule : rules) {
			if (rule.appliesTo(method) && matchesAny(rule, paths)) {
				if (specs == null) {
					specs = new LinkedHashMap<>();
				}
				specs.putIfAbsent(rule.spec().policy().name(), rule.spec());
			}
		}
		if (specs == null) {
			return NO_SPECS;
		}
		List<PolicySpec> all = new ArrayList<>(specs.values());
		for (FilterRule rule : rules) {
			if (specs.containsKey(rule.name())) {
				for (PolicySpec shared : rule.shared()) {
					if (all.stream().noneMatch((spec) -> spec.policy().name().equals(shared.policy().name()))) {
						all.add(shared);
					}
				}
			}
		}
		return all.toArray(NO_SPECS);
	}

	private static boolean matchesAny(FilterRule rule, List<PathContainer> paths) {
		for (PathContainer path : paths) {
			if (rule.matches(path)) {
				return true;
			}
		}
		return false;
	}

}
