package io.github.ratelimit.web;

import java.util.EnumSet;
import java.util.List;
import java.util.Set;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.CalendarWindow;
import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.TimeSource;
import io.github.ratelimit.internal.Durations;

import org.springframework.http.HttpHeaders;

/**
 * Writes the rate limit headers in one or more {@linkplain RateLimitHeaderStyle styles} on every response of a limited
 * endpoint, and {@code Retry-After} (delay-seconds, at least 1) on every rejection but a concurrency limit's, where
 * nothing says when a request in flight ends. The default style is
 * {@link RateLimitHeaderStyle#DRAFT_6}: {@code RateLimit-Limit}, {@code RateLimit-Remaining} and
 * {@code RateLimit-Reset} (delay-seconds until the full capacity is back, rounded up).
 * <p>
 * When the store failed and the policy lets requests pass uncounted, nothing is known of the counters and no rate
 * limit header is written for it; when it rejects them instead, only {@code Retry-After} is.
 *
 * @since 0.1.0
 */
public class StandardRateLimitHeadersWriter implements RateLimitHeadersWriter {

	/** Header carrying the capacity (draft 6). */
	public static final String LIMIT = "RateLimit-Limit";

	/** Header carrying the units that could pass now (draft 6). */
	public static final String REMAINING = "RateLimit-Remaining";

	/** Header carrying the seconds until the full capacity is available again (draft 6). */
	public static final String RESET = "RateLimit-Reset";

	/** Header listing the policies, {@code "<name>";q=<limit>;w=<window seconds>} (drafts 10 and 11). */
	public static final String POLICY = "RateLimit-Policy";

	/**
	 * Header listing the policies' state, {@code "<name>";r=<available>;t=<effective window seconds>} (drafts 10 and
	 * 11).
	 */
	public static final String RATELIMIT = "RateLimit";

	/** Header carrying the capacity (X- style). */
	public static final String X_LIMIT = "X-RateLimit-Limit";

	/** Header carrying the units that could pass now (X- style). */
	public static final String X_REMAINING = "X-RateLimit-Remaining";

	/** Header carrying the reset, in delta or epoch seconds (X- style). */
	public static final String X_RESET = "X-RateLimit-Reset";

	/** Header carrying the seconds to wait before retrying a rejected request. */
	public static final String RETRY_AFTER = "Retry-After";

	private final Set<RateLimitHeaderStyle> styles;

	private final RateLimitHeaderStyle.ResetFormat resetFormat;

	private final TimeSource clock;

	private final boolean showSharedQuotas;

	/**
	 * Create a writer of the {@link RateLimitHeaderStyle#DRAFT_6} headers.
	 */
	public StandardRateLimitHeadersWriter() {
		this(Set.of(RateLimitHeaderStyle.DRAFT_6), RateLimitHeaderStyle.ResetFormat.DELTA_SECONDS, TimeSource.system());
	}

	/**
	 * Create a writer of the given styles that leaves application-wide quotas out.
	 * @param styles the styles, not empty; {@link RateLimitHeaderStyle#NONE} only alone
	 * @param resetFormat how {@code X-RateLimit-Reset} gives the reset
	 * @param clock the clock epoch resets are computed with
	 */
	public StandardRateLimitHeadersWriter(Set<RateLimitHeaderStyle> styles,
			RateLimitHeaderStyle.ResetFormat resetFormat, TimeSource clock) {
		this(styles, resetFormat, clock, false);
	}

	/**
	 * Create a writer of the given styles.
	 * @param styles the styles, not empty; {@link RateLimitHeaderStyle#NONE} only alone
	 * @param resetFormat how {@code X-RateLimit-Reset} gives the reset
	 * @param clock the clock epoch resets are computed with
	 * @param showSharedQuotas whether to show the state of quotas whose key is the same for every client (the whole
	 * application's traffic, which any client would otherwise watch)
	 * @since 0.2.0
	 */
	public StandardRateLimitHeadersWriter(Set<RateLimitHeaderStyle> styles,
			RateLimitHeaderStyle.ResetFormat resetFormat, TimeSource clock, boolean showSharedQuotas) {
		if (styles.isEmpty()) {
			throw new IllegalArgumentException("'styles' must not be empty (use NONE for no headers)");
		}
		if (styles.contains(RateLimitHeaderStyle.NONE) && styles.size() > 1) {
			throw new IllegalArgumentException("'styles' cannot combine NONE with other styles but was " + styles);
		}
		this.styles = EnumSet.copyOf(styles);
		this.resetFormat = resetFormat;
		this.clock = clock;
		this.showSharedQuotas = showSharedQuotas;
	}

	@Override
	public void writeHeaders(HttpHeaders headers, RateLimitPolicy policy, Decision decision) {
		writeHeaders(headers, List.of(new AppliedRateLimit(policy, decision)));
	}

	@Override
	public void writeHeaders(HttpHeaders headers, List<AppliedRateLimit> limits) {
		if (limits.isEmpty()) {
			return;
		}
		boolean rejected = !limits.get(0).decision().allowed();
		long retryAfter = limits.get(0).retryAfterSeconds();
		List<AppliedRateLimit> shown = shown(limits);
		Decision first = shown.isEmpty() ? null : shown.get(0).decision();
		if (first != null && first.isKnown()) {
			if (this.styles.contains(RateLimitHeaderStyle.DRAFT_6)) {
				headers.set(LIMIT, Long.toString(first.limit()));
				headers.set(REMAINING, Long.toString(first.remaining()));
				// A concurrency limit's: when every slot now held is back, its request ended or not (at most a hold).
				headers.set(RESET, Long.toString(first.resetAfterSeconds()));
			}
			if (this.styles.contains(RateLimitHeaderStyle.X_RATELIMIT)) {
				headers.set(X_LIMIT, Long.toString(first.limit()));
				headers.set(X_REMAINING, Long.toString(first.remaining()));
				headers.set(X_RESET, Long.toString(xReset(first)));
			}
		}
		if (this.styles.contains(RateLimitHeaderStyle.DRAFT_11) || this.styles.contains(RateLimitHeaderStyle.DRAFT_10)) {
			writeDraft11(headers, shown, (rejected && retryAfter > 0) ? retryAfter : Long.MAX_VALUE);
		}
		if (rejected && retryAfter > 0) { // none for a concurrency limit: a slot frees whenever a request ends
			// Whatever is shown: a client turned away by an application-wide quota is still told when to retry.
			headers.set(RETRY_AFTER, Long.toString(retryAfter));
		}
	}

	private static boolean concurrent(AppliedRateLimit limit) {
		return limit.policy().algorithm() == Algorithm.CONCURRENCY;
	}

	/** The limits whose state may be shown: not the application-wide quotas, unless configured. */
	private List<AppliedRateLimit> shown(List<AppliedRateLimit> limits) {
		if (this.showSharedQuotas) {
			return limits;
		}
		for (AppliedRateLimit limit : limits) {
			if (limit.sharedByEveryClient()) {
				return limits.stream().filter((applied) -> !applied.sharedByEveryClient()).toList();
			}
		}
		return limits;
	}

	private long xReset(Decision decision) {
		if (this.resetFormat == RateLimitHeaderStyle.ResetFormat.EPOCH_SECONDS) {
			return Durations.toSecondsRoundedUp(this.clock.currentTimeMillis() + decision.resetAfterMillis());
		}
		return decision.resetAfterSeconds();
	}

	/**
	 * Draft 11's fields: {@code t} is the effective window, the whole seconds within which no more than {@code r} can
	 * pass (rounded down, so that it is never longer), and never more than {@code Retry-After} on a rejection.
	 */
	private static void writeDraft11(HttpHeaders headers, List<AppliedRateLimit> limits, long retryAfter) {
		StringBuilder policies = new StringBuilder();
		StringBuilder states = new StringBuilder();
		for (AppliedRateLimit limit : limits) {
			if (!limit.decision().isKnown()) {
				continue;
			}
			if (!policies.isEmpty()) {
				policies.append(", ");
				states.append(", ");
			}
			RateLimitPolicy policy = limit.policy();
			StructuredFields.appendString(policies, policy.name());
			// The capacity, as RateLimit-Limit: for the buckets the burst, which is what r counts down from.
			StructuredFields.appendIntegerParameter(policies, "q", policy.capacity());
			StructuredFields.appendString(states, policy.name());
			StructuredFields.appendIntegerParameter(states, "r", limit.decision().remaining());
			if (concurrent(limit)) {
				// Slots in flight: no window, and no time when one frees (whenever a request ends).
				policies.append(";qu=");
				StructuredFields.appendString(policies, "concurrent-requests");
				continue;
			}
			CalendarWindow calendar = policy.calendar();
			StructuredFields.appendIntegerParameter(policies, "w", (calendar != null) ? calendar.nominalSeconds()
					: Math.max(1, Durations.toSecondsRoundedUp(policy.windowMillis())));
			StructuredFields.appendIntegerParameter(states, "t",
					Math.min(retryAfter, limit.nextUnitAfterMillis() / 1000));
		}
		if (!policies.isEmpty()) {
			headers.set(POLICY, policies.toString());
			headers.set(RATELIMIT, states.toString());
		}
	}

}
