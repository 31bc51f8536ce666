package io.github.ratelimit.engine;

import java.util.List;

import io.github.ratelimit.store.Acquisition;

/**
 * What one layer asks the limiter, once exemptions, skips, tenants, keys, costs and the plan are known.
 *
 * @param scope the request's values, for what is settled later
 * @param enforced the enforced policies, in the order of their acquisitions
 * @param acquisitions what the enforced policies take, all or nothing
 * @param shadows the shadow policies, in the order of their acquisitions
 * @param shadowAcquisitions what each shadow policy takes, apart
 */
record LayerPlan(RequestScope scope, List<PolicySpec> enforced, List<Acquisition> acquisitions,
		List<PolicySpec> shadows, List<Acquisition> shadowAcquisitions) {

}
