package io.github.ratelimit.aop;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import io.github.ratelimit.annotation.RateLimited;

import org.springframework.core.annotation.MergedAnnotation;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;
import org.springframework.web.util.pattern.PatternParseException;

/**
 * Builds and checks the rules of the filter layer from their definitions: each filter's policy is declared with the
 * registry like an annotation's, so that names, plans and the endpoint see it.
 */
final class FilterRules {

	private static final Set<String> HTTP_METHODS = Set.of("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS",
			"TRACE");

	private FilterRules() {
	}

	static List<RateLimitFilter.Rule> build(List<FilterDefinition> definitions, RateLimitedMethodRegistry registry) {
		List<FilterDefinition> ordered = new ArrayList<>(definitions);
		ordered.sort(Comparator.comparingInt(FilterDefinition::order).thenComparing(FilterDefinition::name));
		List<RateLimitFilter.Rule> rules = new ArrayList<>(ordered.size());
		for (FilterDefinition definition : ordered) {
			String where = "ratelimit.filters." + (definition.name().contains(".") ? "[" + definition.name() + "]"
					: definition.name());
			List<PathPattern> patterns = patterns(definition, where);
			Set<String> methods = methods(definition, where);
			MethodPolicy policy = registry.buildConfigured(attributes(definition), where,
					new PolicyOverride(null, null, null, null, null, definition.failureMode()));
			if (policy == null) {
				continue;
			}
			List<MethodPolicy> shared = new ArrayList<>();
			for (int i = 0; i < definition.policies().size(); i++) {
				String name = definition.policies().get(i).trim();
				MethodPolicy sharedPolicy = registry.sharedPolicy(name, where + ".policies[" + i + "]");
				if (sharedPolicy != null) {
					shared.add(sharedPolicy);
				}
			}
			rules.add(new RateLimitFilter.Rule(definition.name(), patterns, methods, policy, shared));
		}
		return rules;
	}

	private static List<PathPattern> patterns(FilterDefinition definition, String where) {
		if (definition.paths().isEmpty()) {
			throw new InvalidRateLimitPolicyException(definition.name(), where
					+ ".paths: at least one path pattern is required (such as /api/**)");
		}
		List<PathPattern> patterns = new ArrayList<>();
		for (int i = 0; i < definition.paths().size(); i++) {
			String path = definition.paths().get(i).trim();
			try {
				patterns.add(PathPatternParser.defaultInstance.parse(path));
			}
			catch (PatternParseException ex) {
				throw new InvalidRateLimitPolicyException(definition.name(), where + ".paths[" + i + "]: '" + path
						+ "' is not a path pattern: " + ex.getMessage(), ex);
			}
		}
		return patterns;
	}

	private static Set<String> methods(FilterDefinition definition, String where) {
		Set<String> methods = new LinkedHashSet<>();
		for (int i = 0; i < definition.methods().size(); i++) {
			String method = definition.methods().get(i).trim().toUpperCase(Locale.ROOT);
			if (!HTTP_METHODS.contains(method)) {
				throw new InvalidRateLimitPolicyException(definition.name(), where + ".methods[" + i + "]: '"
						+ definition.methods().get(i) + "' is not an HTTP method (one of " + String.join(", ",
								new java.util.TreeSet<>(HTTP_METHODS)) + ")");
			}
			methods.add(method);
		}
		return Set.copyOf(methods);
	}

	/** The filter's policy attributes, as an annotation would give them. */
	private static RateLimited attributes(FilterDefinition definition) {
		Map<String, Object> attributes = new LinkedHashMap<>();
		attributes.put("name", definition.name());
		if (definition.limit() != null) {
			attributes.put("limit", definition.limit());
		}
		if (definition.window() != null) {
			attributes.put("window", definition.window().toString());
		}
		attributes.put("algorithm", definition.algorithm());
		if (definition.burst() != null) {
			attributes.put("burst", definition.burst());
		}
		if (definition.key() != null) {
			attributes.put("key", definition.key());
		}
		attributes.put("cost", Long.toString(definition.cost()));
		attributes.put("mode", definition.mode());
		if (definition.skip() != null) {
			attributes.put("skip", definition.skip());
		}
		return MergedAnnotation.of(RateLimited.class, attributes).synthesize();
	}

}
