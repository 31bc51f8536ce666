package io.github.ratelimit.engine;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

import io.github.ratelimit.web.HandlerMethods;

import org.springframework.http.server.PathContainer;

/**
 * What a catalogue limits: in one line for the start-up log, how many methods, filters and gateway routes, by how
 * many policies, so that a limit that did not register (a method not proxied, a route without its filter) shows; and
 * for the endpoint, which handler methods no limit covers.
 *
 * @since 0.4.0
 */
public final class PolicyCatalogSummary {

	private PolicyCatalogSummary() {
	}

	/**
	 * Describe what a catalogue limits: {@code Rate limits: 3 methods, 1 filter and 2 gateway routes limited by 5
	 * policies}.
	 * @param catalog the catalogue
	 * @return the line
	 */
	public static String of(PolicyCatalog catalog) {
		Set<String> methods = new LinkedHashSet<>();
		Set<String> filters = new LinkedHashSet<>();
		Set<String> routes = new LinkedHashSet<>();
		for (String name : catalog.names()) {
			for (String declaration : catalog.declaredBy(name)) {
				if (declaration.startsWith(FilterRules.PREFIX + ".")) {
					filters.add(declaration);
				}
				else if (declaration.contains("#") && declaration.endsWith(")")) {
					methods.add(declaration); // OrderController#orders(String)
				}
				else if (!declaration.startsWith(PolicyCatalog.POLICIES + ".")) {
					routes.add(declaration); // declared by a web stack's configuration: a gateway's route
				}
			}
		}
		List<String> parts = new ArrayList<>();
		if (!methods.isEmpty()) {
			parts.add(count(methods.size(), "method"));
		}
		if (!filters.isEmpty()) {
			parts.add(count(filters.size(), "filter"));
		}
		if (!routes.isEmpty()) {
			parts.add(count(routes.size(), "gateway route"));
		}
		if (parts.isEmpty()) {
			return "Rate limits: no method, filter or gateway route is limited";
		}
		String limited = (parts.size() == 1) ? parts.get(0)
				: String.join(", ", parts.subList(0, parts.size() - 1)) + " and " + parts.get(parts.size() - 1);
		int policies = (int) catalog.policies().stream().filter(PolicySpec::isEnabled).count();
		return "Rate limits: " + limited + " limited by " + count(policies, "policy");
	}

	/**
	 * Return the handler methods that no limit covers: no {@code @RateLimited} policy of their own, and for some HTTP
	 * method and path pattern they are mapped to, no filter. Spring's own handlers (such as the error controller) are
	 * left out.
	 * @param catalog the catalogue
	 * @param handlers the web stack's handler methods
	 * @return each as {@code GET /api/health HealthController#health()}, sorted
	 */
	public static List<String> unlimited(PolicyCatalog catalog, HandlerMethods handlers) {
		List<String> unlimited = new ArrayList<>();
		for (HandlerMethods.Mapping mapping : handlers.mappings()) {
			if (mapping.beanType().getName().startsWith("org.springframework.")
					|| catalog.lookup(mapping.method(), mapping.beanType()) != null || coveredByFilters(catalog, mapping)) {
				continue;
			}
			unlimited.add((mapping.httpMethods().isEmpty() ? "*" : String.join(",", new TreeSet<>(mapping.httpMethods())))
					+ " " + String.join(" ", new TreeSet<>(mapping.patterns())) + " "
					+ RateLimitedMethods.describe(mapping.beanType(), mapping.method()));
		}
		Collections.sort(unlimited);
		return unlimited;
	}

	/** Whether filters apply to every HTTP method and path pattern of the mapping. */
	private static boolean coveredByFilters(PolicyCatalog catalog, HandlerMethods.Mapping mapping) {
		Set<String> httpMethods = mapping.httpMethods().isEmpty() ? FilterRules.HTTP_METHODS : mapping.httpMethods();
		for (String pattern : mapping.patterns()) {
			List<PathContainer> path = List.of(PathContainer.parsePath(pattern));
			for (String httpMethod : httpMethods) {
				if (!catalog.hasFilterFor(httpMethod, path)) {
					return false;
				}
			}
		}
		return !mapping.patterns().isEmpty();
	}

	private static String count(int count, String what) {
		String plural = what.endsWith("y") ? what.substring(0, what.length() - 1) + "ies" : what + "s";
		return count + " " + ((count == 1) ? what : plural);
	}

}
