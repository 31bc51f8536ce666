package io.github.ratelimit.autoconfigure;

/**
 * Settings of the rate limit meters ({@code ratelimit.metrics}).
 */
public class MetricsProperties {

	/**
	 * Share of a policy's capacity in use after an admission from which the admission counts as near the limit
	 * (ratelimit.near.limit), as Envoy's near_limit.
	 */
	private double nearLimitRatio = 0.8;

	public double getNearLimitRatio() {
		return this.nearLimitRatio;
	}

	public void setNearLimitRatio(double nearLimitRatio) {
		this.nearLimitRatio = nearLimitRatio;
	}

}
