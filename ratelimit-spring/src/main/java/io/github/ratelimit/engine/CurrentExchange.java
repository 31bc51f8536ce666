package io.github.ratelimit.engine;

import org.jspecify.annotations.Nullable;

/**
 * The request being served on this thread, as the web stack knows it (Spring MVC binds it to the thread): what the
 * interceptor of {@code @RateLimited} methods decides their limits for.
 *
 * @since 0.2.0
 */
@FunctionalInterface
public interface CurrentExchange {

	/** No request: methods called outside of one are decided without it (their IP-keyed limits on one key). */
	CurrentExchange NONE = () -> null;

	/**
	 * Return the current request and response.
	 * @return the exchange, or {@code null} outside of a request
	 */
	@Nullable RateLimitExchange get();

}
