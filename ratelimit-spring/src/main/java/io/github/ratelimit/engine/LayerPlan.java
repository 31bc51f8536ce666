package io.github.ratelimit.engine;

import java.util.List;

import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.store.Acquisition;

/**
 * What one layer asks the limiter, once exemptions, skips, tenants, keys, costs and the plan are known.
 *
 * @param scope the request's values, for what is settled later
 * @param enforced the enforced policies, in the order of their acquisitions
 * @param acquisitions what the enforced policies take, all or nothing, then their penalty groups' checks
 * @param checksFrom the index of the first penalty group's check (the size of {@code acquisitions} if none), whose
 * policy in {@code enforced} is the one that draws the group
 * @param policies the limits of each enforced policy's own acquisition, as the client is told them
 * @param shadows the shadow policies, in the order of their acquisitions
 * @param shadowAcquisitions what each shadow policy takes, apart
 */
record LayerPlan(RequestScope scope, List<PolicySpec> enforced, List<Acquisition> acquisitions, int checksFrom,
		List<RateLimitPolicy> policies, List<PolicySpec> shadows, List<Acquisition> shadowAcquisitions) {

	/**
	 * The limits an enforced policy's acquisition counts under (the tenant's, the plan's, or its own), as the client
	 * is told them: a bucket that reserves turns for waiting requests is counted in the store with its reserve.
	 */
	RateLimitPolicy real(int index) {
		return this.policies.get(index);
	}

	/** The enforced policies' own specs, without the checks of their penalty groups. */
	List<PolicySpec> ownEnforced() {
		return (this.checksFrom == this.enforced.size()) ? this.enforced : this.enforced.subList(0, this.checksFrom);
	}

}
