package io.github.ratelimit.engine;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import org.jspecify.annotations.Nullable;

import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;
import org.springframework.web.util.pattern.PatternParseException;

/**
 * The filters of the filter layer ({@code ratelimit.filters.*}) built from their definitions, in the order they are
 * decided, each with its path patterns, its HTTP methods, its policy and the shared policies it draws; a mistake fails
 * the start naming the filter's property.
 */
final class FilterRules {

	/** Where filters are configured. */
	static final String PREFIX = "ratelimit.filters";

	static final Set<String> HTTP_METHODS = Set.of("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS",
			"TRACE");

	private FilterRules() {
	}

	/** Parses and declares the policy of a filter or of a shared policy, configured at {@code where}. */
	interface Declarer {

		@Nullable PolicySpec declare(String name, String where, List<PolicyValues> values);

	}

	static List<FilterRule> build(List<FilterDefinition> definitions, Map<String, PolicyValues> configured,
			Declarer declarer) {
		List<FilterDefinition> ordered = new ArrayList<>(definitions);
		ordered.sort(Comparator.comparingInt(FilterDefinition::order).thenComparing(FilterDefinition::name));
		List<FilterRule> rules = new ArrayList<>(ordered.size());
		for (FilterDefinition definition : ordered) {
			String where = PREFIX + "." + PolicyParser.bracketed(definition.name());
			List<PathPattern> patterns = patterns(definition, where);
			Set<String> methods = methods(definition, where);
			PolicySpec spec = declarer.declare(definition.name(), where, List.of(definition.values()));
			if (spec == null) {
				continue;
			}
			List<PolicySpec> shared = new ArrayList<>();
			for (int i = 0; i < definition.policies().size(); i++) {
				PolicySpec drawn = sharedPolicy(definition.policies().get(i).trim(), where + ".policies[" + i + "]",
						configured, declarer);
				if (drawn != null) {
					shared.add(drawn);
				}
			}
			rules.add(new FilterRule(definition.name(), patterns, methods, spec, List.copyOf(shared)));
		}
		return List.copyOf(rules);
	}

	/** The path patterns of each filter, as configured, by name, in the order the filters are decided. */
	static Map<String, List<String>> patternsByName(List<FilterRule> rules) {
		Map<String, List<String>> paths = new LinkedHashMap<>();
		for (FilterRule rule : rules) {
			paths.put(rule.name(), rule.patterns().stream().map(PathPattern::getPatternString).toList());
		}
		return Collections.unmodifiableMap(paths);
	}

	/** A shared policy, defined in {@code ratelimit.policies.<name>} only, that a filter draws. */
	private static @Nullable PolicySpec sharedPolicy(String name, String where, Map<String, PolicyValues> configured,
			Declarer declarer) {
		PolicyValues values = configured.get(name);
		if (values == null || values.get("limit") == null || values.get("window") == null) {
			throw new InvalidRateLimitPolicyException(name, where + " names policy '" + name + "', which is not "
					+ "defined under ratelimit.policies (a shared policy needs at least its limit and window there)");
		}
		return declarer.declare(name, PolicyCatalog.POLICIES + "." + PolicyParser.bracketed(name), List.of(values));
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
		return List.copyOf(patterns);
	}

	private static Set<String> methods(FilterDefinition definition, String where) {
		Set<String> methods = new LinkedHashSet<>();
		for (int i = 0; i < definition.methods().size(); i++) {
			String method = definition.methods().get(i).trim().toUpperCase(Locale.ROOT);
			if (!HTTP_METHODS.contains(method)) {
				throw new InvalidRateLimitPolicyException(definition.name(), where + ".methods[" + i + "]: '"
						+ definition.methods().get(i) + "' is not an HTTP method (one of "
						+ String.join(", ", new TreeSet<>(HTTP_METHODS)) + ")");
			}
			methods.add(method);
		}
		return Set.copyOf(methods);
	}

}
