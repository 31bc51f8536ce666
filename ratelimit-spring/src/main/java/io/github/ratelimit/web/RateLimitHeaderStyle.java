package io.github.ratelimit.web;

/**
 * Which rate limit headers a response carries. {@code Retry-After} is sent on every rejection whatever the style,
 * but a concurrency limit's, where nothing says when a request in flight ends.
 *
 * @since 0.1.0
 */
public enum RateLimitHeaderStyle {

	/**
	 * {@code RateLimit-Limit}, {@code RateLimit-Remaining}, {@code RateLimit-Reset} (delta seconds): the separate
	 * fields of the IETF draft up to version 06, of the policy that rejected the request or else the most restrictive
	 * one.
	 */
	DRAFT_6,

	/**
	 * The same as {@link #DRAFT_11}: drafts 8 to 11 share one wire format.
	 */
	DRAFT_10,

	/**
	 * {@code RateLimit-Policy: "<name>";q=<capacity>;w=<seconds>} and {@code RateLimit: "<name>";r=<available>;t=<seconds>}
	 * (draft-ietf-httpapi-ratelimit-headers-11, RFC 9651 structured fields), listing every policy that applied, most
	 * restrictive first. {@code t} is the <em>effective window</em>: the whole seconds within which no more than
	 * {@code r} units can pass (until the available quota next grows), never more than {@code Retry-After} on a
	 * rejection. A concurrency limit is {@code "<name>";q=<limit>;qu="concurrent-requests"} and
	 * {@code "<name>";r=<free slots>}: no window, and no time when a slot frees.
	 * @since 0.2.0
	 */
	DRAFT_11,

	/**
	 * {@code X-RateLimit-Limit}, {@code X-RateLimit-Remaining}, {@code X-RateLimit-Reset} (delta or epoch seconds, see
	 * {@link ResetFormat}), of the policy that rejected the request or else the most restrictive one: what many public
	 * APIs send.
	 */
	X_RATELIMIT,

	/** No rate limit headers (but {@code Retry-After} on rejections). */
	NONE;

	/**
	 * How {@code X-RateLimit-Reset} gives the reset time.
	 */
	public enum ResetFormat {

		/** Seconds from now until the full capacity is back, as every other reset header. */
		DELTA_SECONDS,

		/** The time the full capacity is back, in seconds since the Unix epoch. */
		EPOCH_SECONDS

	}

}
