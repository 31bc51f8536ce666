package io.github.ratelimit.engine;

import org.jspecify.annotations.Nullable;

/**
 * Where a policy's limits for a tenant come from: the application's own data (a table of customers and their plans, a
 * configuration service). Declare one as a bean and give the policy a tenant expression
 * ({@code @RateLimited(tenant = "#tenant")} or {@code ratelimit.policies.<name>.tenant}); the engine asks it for the
 * limits of each tenant it meets, caches the answer ({@link RateLimitTenants}), and counts each tenant with limits of
 * its own apart from every other.
 * <p>
 * It is called on a thread of its own, never on a request's, and interrupted past {@code ratelimit.tenants.timeout}.
 * A tenant it gave limits of its own keeps them while a later call fails or hangs; a first lookup that fails or
 * times out follows the policy's failure mode ({@code allow} and {@code local}: the policy's own limits;
 * {@code deny}: 503), and is asked again on a later request.
 *
 * @since 0.3.0
 */
@FunctionalInterface
public interface TenantLimitsSource {

	/**
	 * Return a policy's limits for a tenant.
	 * @param policy the policy's name
	 * @param tenant the tenant, as the policy's tenant expression gave it
	 * @return the tenant's limits, or {@code null} (or {@link TenantLimits#DEFAULT}) for the policy's own
	 */
	@Nullable TenantLimits limitsOf(String policy, String tenant);

}
