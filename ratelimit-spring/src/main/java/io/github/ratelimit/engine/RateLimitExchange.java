package io.github.ratelimit.engine;

import io.github.ratelimit.web.RateLimitRequest;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpHeaders;

/**
 * A request and its response as a web stack hands them to the method layer ({@code @RateLimited} methods): the request
 * to decide, and the response to write the outcome's headers on.
 *
 * @since 0.2.0
 */
public interface RateLimitExchange {

	/**
	 * Return the request.
	 * @return the request
	 */
	RateLimitRequest request();

	/**
	 * Set headers on the response, replacing any of the same name (an earlier layer's).
	 * @param headers the headers
	 */
	void setResponseHeaders(HttpHeaders headers);

	/**
	 * Return whether the web stack serves a method's result after the method returns (on Spring MVC: an
	 * {@code SseEmitter}, a {@code StreamingResponseBody}, a {@code DeferredResult}, a {@code CompletionStage}, a
	 * {@code Callable}, a reactive type), so that what the request cost is settled once it completes
	 * ({@link RateLimitSettlement#settleWhenRequestCompletes}).
	 * @param result what the method returned
	 * @return whether the result is served later; {@code false} unless the stack says so
	 * @since 0.3.0
	 */
	default boolean completesLater(@Nullable Object result) {
		return false;
	}

}
