package io.github.ratelimit.engine;

import java.util.List;

import io.github.ratelimit.web.AppliedRateLimit;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpHeaders;
import org.springframework.web.ErrorResponseException;

/**
 * What the engine decided for one layer of a request, for the web stack to write back: the limits that applied (this
 * layer's and the earlier ones', the rejecting or else the most restrictive first), the response headers to set, and
 * the rejection if there is one (its status and problem body). Nothing was counted for a rejected request by this
 * layer.
 *
 * @since 0.2.0
 */
public final class RateLimitOutcome {

	/** Nothing applied: no header to write, nothing to settle. */
	static final RateLimitOutcome NONE = new RateLimitOutcome(List.of(), HttpHeaders.EMPTY, null, LayerHold.NONE);

	private final List<AppliedRateLimit> limits;

	private final HttpHeaders headers;

	private final @Nullable ErrorResponseException rejection;

	private final LayerHold held;

	RateLimitOutcome(List<AppliedRateLimit> limits, HttpHeaders headers, @Nullable ErrorResponseException rejection,
			LayerHold held) {
		this.limits = limits;
		this.headers = HttpHeaders.readOnlyHttpHeaders(headers);
		this.rejection = rejection;
		this.held = held;
	}

	/**
	 * Return every limit that applied to the request so far, the rejecting or else the most restrictive first.
	 * @return the limits, empty if none applied
	 */
	public List<AppliedRateLimit> limits() {
		return this.limits;
	}

	/**
	 * Return the headers to set on the response (replacing an earlier layer's): the rate limit headers, and
	 * {@code Retry-After} on a rejection.
	 * @return the headers, possibly empty
	 */
	public HttpHeaders headers() {
		return this.headers;
	}

	/**
	 * Return whether the request is rejected.
	 * @return whether it is
	 */
	public boolean isRejected() {
		return this.rejection != null;
	}

	/**
	 * Return the rejection, with its status and problem body: a {@code 429}
	 * ({@link io.github.ratelimit.web.RateLimitExceededException}), a {@code 503} when the store failed and a policy
	 * fails closed ({@link io.github.ratelimit.web.RateLimitUnavailableException}), or a {@code 400} for a request
	 * whose cost is not a whole number of at least 1 ({@link io.github.ratelimit.web.InvalidRateLimitCostException}).
	 * @return the rejection, or {@code null} if the request is admitted
	 */
	public @Nullable ErrorResponseException rejection() {
		return this.rejection;
	}

	/**
	 * Return the rejection's problem body as JSON, for a layer that answers before any message converter runs: the
	 * body the method layer's rejection gets from Spring, its {@code instance} included.
	 * @param instance the request's path as Spring names a problem's instance: on Spring MVC the request URI, on
	 * WebFlux the request's path, both raw and with the context path, without the query
	 * @return the JSON
	 * @throws IllegalStateException if the request is admitted
	 */
	public String problemJson(String instance) {
		if (this.rejection == null) {
			throw new IllegalStateException("The request is admitted");
		}
		return ProblemJson.write(this.rejection.getBody(), instance);
	}

	LayerHold held() {
		return this.held;
	}

}
