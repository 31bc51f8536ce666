package io.github.ratelimit.web;

import java.lang.reflect.Method;
import java.util.List;
import java.util.Set;

/**
 * The handler methods a web stack maps requests to, each with its HTTP methods and path patterns: what the
 * {@code ratelimits} endpoint checks for handlers that no limit covers. Each web stack's module provides one.
 *
 * @since 0.4.0
 */
@FunctionalInterface
public interface HandlerMethods {

	/**
	 * Return every handler method mapped now.
	 * @return the mappings
	 */
	List<Mapping> mappings();

	/**
	 * One handler method and where requests reach it.
	 * @param httpMethods the HTTP methods it is mapped to, empty for all
	 * @param patterns its path patterns
	 * @param beanType the class of the bean that handles it
	 * @param method the method
	 */
	record Mapping(Set<String> httpMethods, Set<String> patterns, Class<?> beanType, Method method) {

		/**
		 * Create a mapping.
		 * @param httpMethods the HTTP methods, empty for all
		 * @param patterns the path patterns
		 * @param beanType the bean's class
		 * @param method the method
		 */
		public Mapping {
			httpMethods = Set.copyOf(httpMethods);
			patterns = Set.copyOf(patterns);
		}

	}

}
