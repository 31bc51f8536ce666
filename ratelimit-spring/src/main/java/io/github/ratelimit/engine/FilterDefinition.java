package io.github.ratelimit.engine;

import java.util.List;

/**
 * One limit of the filter layer, applied before dispatch to the requests it matches, as configured under
 * {@code ratelimit.filters.<name>}: where it applies, and its policy's values (the same attributes as any policy's).
 *
 * @param name the filter's name, which is its policy's name
 * @param order the order among filters, lower first
 * @param paths the request paths it applies to, in {@code PathPattern} syntax
 * @param methods the HTTP methods it applies to, or empty for all
 * @param values its policy's values; the key is an expression over {@code #request} and {@code #clientIp}
 * @param policies the shared policies ({@code ratelimit.policies.<name>} with a key) requests it applies to draw too
 * @since 0.2.0
 */
public record FilterDefinition(String name, int order, List<String> paths, List<String> methods, PolicyValues values,
		List<String> policies) {

	/**
	 * Create a definition.
	 * @param name the filter's name
	 * @param order the order among filters
	 * @param paths the paths
	 * @param methods the HTTP methods, or empty for all
	 * @param values its policy's values
	 * @param policies the shared policies it draws
	 */
	public FilterDefinition {
		paths = List.copyOf(paths);
		methods = List.copyOf(methods);
		policies = List.copyOf(policies);
	}

}
