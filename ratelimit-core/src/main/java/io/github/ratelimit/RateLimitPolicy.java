package io.github.ratelimit;

import io.github.ratelimit.internal.Durations;
import io.github.ratelimit.internal.Checks;
import java.time.Duration;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * A rate limit: at most {@code limit} units per {@code window}, enforced by an {@link Algorithm}. Immutable and
 * validated on construction; an invalid value fails with a message that names the attribute and shows the value.
 * <p>
 * Every algorithm works in whole milliseconds with exact integer arithmetic, identical in memory and in Redis (whose
 * Lua numbers are doubles, exact up to 2<sup>53</sup>). A policy whose arithmetic could leave that range (a huge limit
 * over a huge window) is rejected here rather than drifting later.
 *
 * @since 0.1.0
 */
public final class RateLimitPolicy {

	/** Largest integer every store can represent exactly (Lua numbers are IEEE doubles). */
	static final long MAX_EXACT = 1L << 53;

	/** Longest window: far beyond any sensible use, short enough that {@code now + 2·window} stays exact. */
	static final long MAX_WINDOW_MILLIS = 1L << 50;

	/**
	 * The most entries a {@link Algorithm#SLIDING_LOG} key may need: its log holds one entry per millisecond with an
	 * admission, so at most {@code min(limit, window in ms)}. A decision may read the whole log (Redis: 3.7 ms for
	 * 9,999 entries, measured, inside a script that blocks every other command), so this bounds it.
	 */
	public static final long MAX_SLIDING_LOG_ENTRIES = 10_000;

	/** The {@link Builder#lease lease} whose blocks are sized by each instance from the rate it admits the key at. */
	public static final long LEASE_AUTO = -1;

	private final String name;

	private final String variant;

	private final Algorithm algorithm;

	private final long limit;

	private final Duration window;

	private final @Nullable CalendarWindow calendar;

	private final long windowMillis;

	private final long burst;

	private final FailureMode failureMode;

	private final PolicyMode mode;

	/** Units leased per block: 0 for none, {@link #LEASE_AUTO} for a size derived from the observed rate. */
	private final long lease;

	private final long unitsPerToken;

	private final long unitsPerMilli;

	private final int hash;

	private RateLimitPolicy(Builder builder) {
		this.name = Checks.hasText(builder.name, "name");
		this.variant = Checks.notNull(builder.variant, "variant");
		this.algorithm = Checks.notNull(builder.algorithm, "algorithm");
		this.limit = Checks.atLeast(builder.limit, 1, "limit");
		this.calendar = builder.calendar;
		this.window = (this.calendar != null) ? Duration.ofMillis(this.calendar.windowMillis())
				: Checks.positiveWholeMillis(builder.window, "window");
		if (this.calendar != null) {
			this.calendar.checkAppliesTo(this.algorithm, builder.lease);
		}
		if (this.window.compareTo(Duration.ofMillis(MAX_WINDOW_MILLIS)) > 0) {
			throw new IllegalArgumentException("'window' must be at most " + MAX_WINDOW_MILLIS
					+ "ms (arithmetic would overflow) but was '" + Durations.format(this.window) + "'");
		}
		this.windowMillis = this.window.toMillis();
		this.burst = (builder.burst != null) ? Checks.atLeast(builder.burst, 1, "burst") : this.limit;
		this.failureMode = Checks.notNull(builder.failureMode, "failureMode");
		this.mode = Checks.notNull(builder.mode, "mode");
		this.lease = checkLease(builder.lease);
		// A rate of limit/window as exact integers: one token is unitsPerToken units, and unitsPerMilli units
		// accrue per millisecond. Dividing by the gcd keeps the numbers small for round values.
		long gcd = gcd(this.limit, this.windowMillis);
		this.unitsPerToken = this.windowMillis / gcd;
		this.unitsPerMilli = this.limit / gcd;
		checkExactArithmetic();
		this.hash = Objects.hash(this.name, this.variant, this.algorithm, this.limit, this.windowMillis, this.burst,
				this.calendar);
	}

	private long checkLease(long lease) {
		if (lease == 0) {
			return 0;
		}
		if (lease < LEASE_AUTO) {
			throw new IllegalArgumentException("'lease' must be 'auto' or a number of units of at least 1 but was " + lease);
		}
		if (this.algorithm.keepsLog()) {
			throw new IllegalArgumentException(this.algorithm.leaseRefusal());
		}
		long capacity = this.algorithm.isBucket() ? this.burst : this.limit;
		if (lease > capacity) {
			throw new IllegalArgumentException("'lease' must be at most the " + (this.algorithm.isBucket() ? "burst" : "limit")
					+ " (" + capacity + ") but was " + lease);
		}
		return lease;
	}

	private void checkExactArithmetic() {
		String tooLarge = "'limit' × 'window' is too large for exact arithmetic with " + this.algorithm + " (limit "
				+ this.limit + ", window '" + describeWindow() + "'";
		if (this.limit > MAX_EXACT / 4) {
			throw new IllegalArgumentException("'limit' must be at most " + MAX_EXACT / 4 + " but was " + this.limit);
		}
		if (this.burst > MAX_EXACT / 4) {
			throw new IllegalArgumentException("'burst' must be at most " + MAX_EXACT / 4 + " but was " + this.burst);
		}
		this.algorithm.checkSlots(this.limit);
		if (this.algorithm == Algorithm.SLIDING_LOG && Math.min(this.limit, this.windowMillis) > MAX_SLIDING_LOG_ENTRIES) {
			throw new IllegalArgumentException("'limit' " + this.limit + " per '" + Durations.format(this.window)
					+ "' is too large for SLIDING_LOG, which keeps an entry per admitted millisecond: up to "
					+ Math.min(this.limit, this.windowMillis) + " per key, more than " + MAX_SLIDING_LOG_ENTRIES
					+ " (each decision may read them all); use SLIDING_COUNTER, which keeps two counters per key");
		}
		if (this.algorithm == Algorithm.SLIDING_COUNTER && multiplyExceeds(this.limit, this.windowMillis, MAX_EXACT / 4)) {
			// The estimate compares previous·(window - elapsed) + (current + cost)·window with limit·window.
			throw new IllegalArgumentException(tooLarge
					+ "): limit × window in milliseconds must stay below 2^51; use a shorter window or a smaller limit");
		}
		if (this.algorithm.isBucket() && multiplyExceeds(this.burst, this.unitsPerToken, MAX_EXACT / 4)) {
			// The bucket holds burst·unitsPerToken units; levels up to twice that are compared.
			throw new IllegalArgumentException(tooLarge + ", burst " + this.burst
					+ "): burst × window / gcd(limit, window) in milliseconds must stay below 2^51; use a smaller "
					+ "burst, a shorter window, or a limit that divides the window more evenly");
		}
	}

	private static boolean multiplyExceeds(long a, long b, long bound) {
		return a > bound / b;
	}

	private static long gcd(long a, long b) {
		while (b != 0) {
			long t = a % b;
			a = b;
			b = t;
		}
		return a;
	}

	/**
	 * Start building a policy with the given name.
	 * @param name the policy name, which namespaces the counters
	 * @return a builder
	 */
	public static Builder builder(String name) {
		return new Builder(name);
	}

	/**
	 * Return a builder initialized with the values of this policy.
	 * @return a builder
	 */
	public Builder toBuilder() {
		Builder builder = new Builder(this.name).variant(this.variant)
			.algorithm(this.algorithm)
			.limit(this.limit)
			.window(this.window)
			.burst(this.burst)
			.failureMode(this.failureMode)
			.mode(this.mode)
			.lease(this.lease);
		builder.calendar = this.calendar;
		return builder;
	}

	/**
	 * Return the policy name. Counters are namespaced by it.
	 * @return the name
	 */
	public String name() {
		return this.name;
	}

	/**
	 * Return which variant of the named policy this is: the plan that changes its limits (see
	 * {@link Builder#variant}), or {@code ""} for the policy as declared.
	 * @return the variant, {@code ""} by default
	 * @since 0.2.0
	 */
	public String variant() {
		return this.variant;
	}

	/**
	 * Return the algorithm that enforces this policy.
	 * @return the algorithm
	 */
	public Algorithm algorithm() {
		return this.algorithm;
	}

	/**
	 * Return the number of units admitted per window (for the buckets: the refill or drain rate per window).
	 * @return the limit, at least 1
	 */
	public long limit() {
		return this.limit;
	}

	/**
	 * Return the window length: for a {@link #calendar() calendar window}, the length of every period on its window
	 * time.
	 * @return the window, a whole number of milliseconds
	 */
	public Duration window() {
		return this.window;
	}

	/**
	 * Return the calendar window this policy counts in, if its windows start on calendar boundaries.
	 * @return the calendar window, or {@code null} for windows of {@link #window()} aligned to the epoch
	 * @since 0.5.0
	 */
	public @Nullable CalendarWindow calendar() {
		return this.calendar;
	}

	/**
	 * Return the window length in milliseconds (on window time for a {@link #calendar() calendar window}).
	 * @return the window in milliseconds
	 */
	public long windowMillis() {
		return this.windowMillis;
	}

	/**
	 * Return the bucket capacity of the bucket algorithms; equal to the limit unless set.
	 * @return the burst, at least 1
	 */
	public long burst() {
		return this.burst;
	}

	/**
	 * Return the most units that can ever be available at once: {@link #burst()} for the bucket algorithms,
	 * {@link #limit()} otherwise. A request that costs more can never pass.
	 * @return the capacity
	 */
	public long capacity() {
		return this.algorithm.isBucket() ? this.burst : this.limit;
	}

	/**
	 * Return what happens when the store cannot decide.
	 * @return the failure mode
	 */
	public FailureMode failureMode() {
		return this.failureMode;
	}

	/**
	 * Return whether the policy rejects what it does not admit, or only reports it.
	 * @return the mode, {@link PolicyMode#ENFORCE} by default
	 * @since 0.2.0
	 */
	public PolicyMode mode() {
		return this.mode;
	}

	/**
	 * Return how many units an instance leases at a time for a key of this policy, admitting locally from the block
	 * (see {@link Builder#lease}).
	 * @return the units per block, 0 if this policy leases none, or {@link #LEASE_AUTO}
	 * @since 0.3.0
	 */
	public long lease() {
		return this.lease;
	}

	/**
	 * Return how many units make one token in the exact integer form of the rate {@code limit/window} used by the
	 * bucket algorithms: {@code window / gcd(limit, window)} (window in milliseconds).
	 * @return the units per token
	 */
	public long unitsPerToken() {
		return this.unitsPerToken;
	}

	/**
	 * Return how many units accrue (or drain) per millisecond in the exact integer form of the rate
	 * {@code limit/window}: {@code limit / gcd(limit, window)}.
	 * @return the units per millisecond
	 */
	public long unitsPerMilli() {
		return this.unitsPerMilli;
	}

	/**
	 * Two policies are equal when they count the same way: same name, variant, algorithm, limit, window (calendar
	 * window included) and burst.
	 * The failure mode and the mode do not take part, since they do not change the counters.
	 */
	@Override
	public boolean equals(@Nullable Object obj) {
		if (this == obj) {
			return true;
		}
		return obj instanceof RateLimitPolicy other && this.hash == other.hash && this.limit == other.limit
				&& this.windowMillis == other.windowMillis && this.burst == other.burst
				&& this.algorithm == other.algorithm && this.name.equals(other.name)
				&& this.variant.equals(other.variant) && Objects.equals(this.calendar, other.calendar);
	}

	@Override
	public int hashCode() {
		return this.hash;
	}

	/**
	 * Describe how this policy counts, for messages: for instance {@code FIXED 60 per 1m} or
	 * {@code TOKEN_BUCKET 10 per 1s, burst 20}.
	 * @return the description
	 */
	public String describe() {
		return this.algorithm + " " + this.limit + " per " + describeWindow()
				+ (this.algorithm.isBucket() ? ", burst " + this.burst : "");
	}

	/**
	 * Describe the window as it is configured: {@code 1m}, or for a calendar window {@code 1M in Europe/Berlin}.
	 * @return the description
	 * @since 0.5.0
	 */
	public String describeWindow() {
		return (this.calendar != null) ? this.calendar.toString() : Durations.format(this.window);
	}

	@Override
	public String toString() {
		return "RateLimitPolicy[" + this.name + (this.variant.isEmpty() ? "" : " (" + this.variant + ")") + ": "
				+ describe() + ", failure mode " + this.failureMode
				+ ((this.mode == PolicyMode.SHADOW) ? ", shadow" : "") + "]";
	}

	/**
	 * Builder for {@link RateLimitPolicy}.
	 */
	public static final class Builder {

		private final String name;

		private String variant = "";

		private Algorithm algorithm = Algorithm.FIXED;

		private long limit;

		private @Nullable Duration window;

		private @Nullable CalendarWindow calendar;

		private @Nullable Long burst;

		private FailureMode failureMode = FailureMode.ALLOW;

		private PolicyMode mode = PolicyMode.ENFORCE;

		private long lease;

		private Builder(String name) {
			this.name = name;
		}

		/**
		 * Set which variant of the named policy this is: the name of the plan whose limits it has, {@code ""} (the
		 * default) for the policy as declared. Variants count apart from each other and from the declared policy wherever their limits differ. A
		 * store shared by instances whose configurations differ (a rolling deploy) uses the name and variant to
		 * find the same policy counted under other parameters.
		 * @param variant the variant
		 * @return this builder
		 * @since 0.2.0
		 */
		public Builder variant(String variant) {
			this.variant = variant;
			return this;
		}

		/**
		 * Set the algorithm; {@link Algorithm#FIXED} by default.
		 * @param algorithm the algorithm
		 * @return this builder
		 */
		public Builder algorithm(Algorithm algorithm) {
			this.algorithm = algorithm;
			return this;
		}

		/**
		 * Set the number of units per window.
		 * @param limit the limit, at least 1
		 * @return this builder
		 */
		public Builder limit(long limit) {
			this.limit = limit;
			return this;
		}

		/**
		 * Set the window.
		 * @param window the window, at least 1ms and a whole number of milliseconds
		 * @return this builder
		 */
		public Builder window(Duration window) {
			this.window = window;
			this.calendar = null;
			return this;
		}

		/**
		 * Set a window that starts on calendar boundaries: a day, a week or a month in a time zone. For
		 * {@link Algorithm#FIXED} and {@link Algorithm#SLIDING_COUNTER}.
		 * @param calendar the calendar window
		 * @return this builder
		 * @since 0.5.0
		 */
		public Builder window(CalendarWindow calendar) {
			this.calendar = calendar;
			this.window = null;
			return this;
		}

		/**
		 * Set the bucket capacity of the bucket algorithms; the limit by default.
		 * @param burst the burst, at least 1, or {@code null} for the limit
		 * @return this builder
		 */
		public Builder burst(@Nullable Long burst) {
			this.burst = burst;
			return this;
		}

		/**
		 * Set what happens when the store cannot decide; {@link FailureMode#ALLOW} by default.
		 * @param failureMode the failure mode
		 * @return this builder
		 */
		public Builder failureMode(FailureMode failureMode) {
			this.failureMode = failureMode;
			return this;
		}

		/**
		 * Set whether the policy rejects what it does not admit; {@link PolicyMode#ENFORCE} by default. The limiter
		 * decides a shadow policy as any other: it is the caller that lets its rejections pass, and listeners that
		 * report them apart.
		 * @param mode the mode
		 * @return this builder
		 * @since 0.2.0
		 */
		public Builder mode(PolicyMode mode) {
			this.mode = mode;
			return this;
		}

		/**
		 * Have each instance in front of a shared store take units of a hot key a block at a time, in one store call,
		 * and admit from the block locally: a store call per block rather than per request. The fleet never admits
		 * more than the policy; it may admit less while other instances hold units they have not used, at most
		 * {@code (instances - 1) × block} per window. Not for {@link Algorithm#SLIDING_LOG}. A store in this process
		 * has nothing to save and leases nothing.
		 * @param lease the units per block, {@link #LEASE_AUTO} to size blocks from the rate each instance admits
		 * the key at, or 0 (the default) to lease nothing
		 * @return this builder
		 * @since 0.3.0
		 */
		public Builder lease(long lease) {
			this.lease = lease;
			return this;
		}

		/**
		 * Build the policy.
		 * @return the policy
		 * @throws IllegalArgumentException if a value is invalid; the message names the attribute and the value
		 */
		public RateLimitPolicy build() {
			return new RateLimitPolicy(this);
		}

	}

}
