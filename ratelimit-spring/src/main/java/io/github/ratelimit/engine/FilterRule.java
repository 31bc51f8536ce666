package io.github.ratelimit.engine;

import java.util.List;
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

}
