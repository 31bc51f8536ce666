package io.github.ratelimit.web;

import org.jspecify.annotations.Nullable;

/**
 * Chooses the plan of a request (the seed's usage plans): the name of one of {@code ratelimit.plans}, whose values
 * then replace those of the policies it changes. A bean of this type is picked up by the filter and the method layer.
 * A request with no plan ({@code null}) or an unknown one is decided under {@code ratelimit.default-plan}.
 * <p>
 * It runs on the request's thread on Spring MVC; on WebFlux, where that thread is an event loop, it runs on the thread
 * the request names for the application's code ({@link RateLimitRequest#applicationCodeExecutor()}: Reactor's bounded
 * elastic scheduler), so it may look the plan up in a database.
 *
 * @since 0.2.0
 */
@FunctionalInterface
public interface RateLimitPlanResolver {

	/**
	 * Return the plan of the request.
	 * @param request the request
	 * @return the plan's name, or {@code null} if it has none
	 */
	@Nullable String resolvePlan(RateLimitRequest request);

}
