package io.github.ratelimit.engine;

import io.github.ratelimit.web.RateLimitRequest;

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

}
