package io.github.ratelimit.web;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The rate limits of the current request and their decisions, so that an endpoint can tell its caller how many calls
 * it has left in its own body: declare a handler method parameter of this type. A view of the request attribute
 * {@link #ATTRIBUTE} (a {@code List<AppliedRateLimit>}), which the limiter sets when it decides, before the method
 * body runs.
 *
 * @since 0.1.0
 */
public final class RateLimitStatus {

	/** Name of the request attribute holding the applied limits, a {@code List<AppliedRateLimit>}. */
	public static final String ATTRIBUTE = RateLimitStatus.class.getName() + ".limits";

	/** Name of the request attribute holding the costs the handler reported, a {@code Map<String, Long>}. */
	public static final String COSTS_ATTRIBUTE = RateLimitStatus.class.getName() + ".costs";

	private final RateLimitRequest request;

	private RateLimitStatus(RateLimitRequest request) {
		this.request = request;
	}

	/**
	 * Return the status of a request: a view read when asked, so that a handler's argument, resolved before the
	 * method's limits are decided, sees them in the method's body.
	 * @param request the request
	 * @return a view of its rate limits
	 * @since 0.2.0
	 */
	public static RateLimitStatus of(RateLimitRequest request) {
		return new RateLimitStatus(request);
	}

	/**
	 * Return every policy that applied to the request with its decision: the one that rejected it or else the most
	 * restrictive first; empty when the handler has no rate limit (or before the limits are decided).
	 * @return the applied limits
	 */
	@SuppressWarnings("unchecked")
	public List<AppliedRateLimit> limits() {
		Object limits = this.request.getAttribute(ATTRIBUTE);
		return (limits instanceof List<?> list) ? (List<AppliedRateLimit>) list : List.of();
	}

	/**
	 * Return the most restrictive limit that applied (the one with the fewest remaining units), if any.
	 * @return the most restrictive limit
	 */
	public Optional<AppliedRateLimit> mostRestrictive() {
		List<AppliedRateLimit> limits = limits();
		return limits.isEmpty() ? Optional.empty() : Optional.of(limits.get(0));
	}

	/**
	 * Report what this request really cost under a policy, once the handler knows it (tokens generated, rows
	 * exported): the variable {@code #reported} of the policy's {@code settle} expression ({@code settle = "#reported"}
	 * settles the reservation to it once the request is served, giving back what was reserved beyond it, or taking the
	 * extra whatever the key has left). Served means when the method returns or throws, or, for a result served later
	 * (a {@code Flux}, an {@code SseEmitter}, a {@code StreamingResponseBody}), when it ends, however it ends: a
	 * handler that streams reports as it goes, so that a stream cut short is settled to what it produced.
	 * @param policy the policy's name
	 * @param cost what the request cost, at least 0
	 * @since 0.3.0
	 */
	@SuppressWarnings("unchecked")
	public void settle(String policy, long cost) {
		if (cost < 0) {
			throw new IllegalArgumentException("'cost' must be at least 0 but was " + cost);
		}
		synchronized (this.request) {
			Object costs = this.request.getAttribute(COSTS_ATTRIBUTE);
			Map<String, Long> reported = (costs instanceof Map<?, ?> map) ? (Map<String, Long>) map
					: new ConcurrentHashMap<>();
			reported.put(policy, cost);
			this.request.setAttribute(COSTS_ATTRIBUTE, reported);
		}
	}

	@Override
	public String toString() {
		return "RateLimitStatus" + limits();
	}

}
