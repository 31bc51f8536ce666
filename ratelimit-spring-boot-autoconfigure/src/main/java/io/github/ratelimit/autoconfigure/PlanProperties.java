package io.github.ratelimit.autoconfigure;


import io.github.ratelimit.engine.PolicyValues;
import org.jspecify.annotations.Nullable;


/**
 * What a plan changes of one policy ({@code ratelimit.plans.<plan>.<policy>}).
 */
public class PlanProperties {

	/**
	 * Return these settings as the plan's values for one policy.
	 * @param source the property prefix, such as {@code ratelimit.plans.pro.quota}
	 * @return the values
	 */
	PolicyValues toValues(String source) {
		return PolicyProperties.values(source, this);
	}

	/**
	 * Limit under this plan. When not set, the policy's limit applies.
	 */
	private @Nullable Long limit;

	/**
	 * Window under this plan: a duration (seconds if no unit is given), or 1d, 1w or 1M as for the policy's window,
	 * in the policy's zone. When not set, the policy's window applies.
	 */
	private @Nullable String window;

	/**
	 * Burst under this plan (bucket algorithms). When not set, the policy's burst applies, or the plan's limit if
	 * the policy's burst is its limit.
	 */
	private @Nullable Long burst;

	public @Nullable Long getLimit() {
		return this.limit;
	}

	public void setLimit(@Nullable Long limit) {
		this.limit = limit;
	}

	public @Nullable String getWindow() {
		return this.window;
	}

	public void setWindow(@Nullable String window) {
		this.window = window;
	}

	public @Nullable Long getBurst() {
		return this.burst;
	}

	public void setBurst(@Nullable Long burst) {
		this.burst = burst;
	}

}
