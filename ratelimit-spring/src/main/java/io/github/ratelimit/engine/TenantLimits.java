package io.github.ratelimit.engine;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.PolicyMode;
import org.jspecify.annotations.Nullable;

/**
 * A tenant's limits for one policy, as a {@link TenantLimitsSource} gives them: each value set replaces the policy's
 * own; each value left unset keeps it (a burst left at the policy's limit follows the tenant's limit, as under a
 * plan). Immutable.
 *
 * @since 0.3.0
 */
public final class TenantLimits {

	/** The policy's own limits. */
	public static final TenantLimits DEFAULT = new TenantLimits(builder());

	private final @Nullable Long limit;

	private final @Nullable Duration window;

	private final @Nullable Long burst;

	private final @Nullable Algorithm algorithm;

	private final @Nullable PolicyMode mode;

	private TenantLimits(Builder builder) {
		this.limit = builder.limit;
		this.window = builder.window;
		this.burst = builder.burst;
		this.algorithm = builder.algorithm;
		this.mode = builder.mode;
	}

	/**
	 * Return limits that change only the limit.
	 * @param limit units per window
	 * @return the limits
	 */
	public static TenantLimits ofLimit(long limit) {
		return builder().limit(limit).build();
	}

	/**
	 * Start building limits.
	 * @return a builder
	 */
	public static Builder builder() {
		return new Builder();
	}

	/**
	 * Return the limit, or {@code null} to keep the policy's.
	 * @return the limit
	 */
	public @Nullable Long limit() {
		return this.limit;
	}

	/**
	 * Return the window, or {@code null} to keep the policy's.
	 * @return the window
	 */
	public @Nullable Duration window() {
		return this.window;
	}

	/**
	 * Return the burst, or {@code null} to keep the policy's.
	 * @return the burst
	 */
	public @Nullable Long burst() {
		return this.burst;
	}

	/**
	 * Return the algorithm, or {@code null} to keep the policy's.
	 * @return the algorithm
	 */
	public @Nullable Algorithm algorithm() {
		return this.algorithm;
	}

	/**
	 * Return the mode, or {@code null} to keep the policy's.
	 * @return the mode
	 */
	public @Nullable PolicyMode mode() {
		return this.mode;
	}

	/**
	 * Return whether these limits change nothing.
	 * @return whether they are the policy's own
	 */
	public boolean isDefault() {
		return this.limit == null && this.window == null && this.burst == null && this.algorithm == null
				&& this.mode == null;
	}

	/**
	 * The limits as values for the parser: each one set, under its attribute's name.
	 * @param source where they came from, for messages
	 */
	PolicyValues values(String source) {
		Map<String, Object> values = new LinkedHashMap<>();
		putIfSet(values, "limit", this.limit);
		putIfSet(values, "window", this.window);
		putIfSet(values, "burst", this.burst);
		putIfSet(values, "algorithm", this.algorithm);
		putIfSet(values, "mode", this.mode);
		return new PolicyValues(source, values);
	}

	private static void putIfSet(Map<String, Object> values, String attribute, @Nullable Object value) {
		if (value != null) {
			values.put(attribute, value);
		}
	}

	@Override
	public boolean equals(@Nullable Object other) {
		return other instanceof TenantLimits limits && Objects.equals(this.limit, limits.limit)
				&& Objects.equals(this.window, limits.window) && Objects.equals(this.burst, limits.burst)
				&& this.algorithm == limits.algorithm && this.mode == limits.mode;
	}

	@Override
	public int hashCode() {
		return Objects.hash(this.limit, this.window, this.burst, this.algorithm, this.mode);
	}

	@Override
	public String toString() {
		return "TenantLimits[limit=" + this.limit + ", window=" + this.window + ", burst=" + this.burst
				+ ", algorithm=" + this.algorithm + ", mode=" + this.mode + "]";
	}

	/**
	 * Builds {@link TenantLimits}.
	 */
	public static final class Builder {

		private @Nullable Long limit;

		private @Nullable Duration window;

		private @Nullable Long burst;

		private @Nullable Algorithm algorithm;

		private @Nullable PolicyMode mode;

		private Builder() {
		}

		/**
		 * Set the limit: units per window (for the buckets, the refill or drain rate per window).
		 * @param limit the limit, or {@code null} to keep the policy's
		 * @return this builder
		 */
		public Builder limit(@Nullable Long limit) {
			this.limit = limit;
			return this;
		}

		/**
		 * Set the window.
		 * @param window the window, or {@code null} to keep the policy's
		 * @return this builder
		 */
		public Builder window(@Nullable Duration window) {
			this.window = window;
			return this;
		}

		/**
		 * Set the burst of the bucket algorithms.
		 * @param burst the burst, or {@code null} to keep the policy's
		 * @return this builder
		 */
		public Builder burst(@Nullable Long burst) {
			this.burst = burst;
			return this;
		}

		/**
		 * Set the algorithm.
		 * @param algorithm the algorithm, or {@code null} to keep the policy's
		 * @return this builder
		 */
		public Builder algorithm(@Nullable Algorithm algorithm) {
			this.algorithm = algorithm;
			return this;
		}

		/**
		 * Set the mode.
		 * @param mode the mode, or {@code null} to keep the policy's
		 * @return this builder
		 */
		public Builder mode(@Nullable PolicyMode mode) {
			this.mode = mode;
			return this;
		}

		/**
		 * Build the limits.
		 * @return the limits
		 */
		public TenantLimits build() {
			return new TenantLimits(this);
		}

	}

}
