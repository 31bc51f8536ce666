package io.github.ratelimit.engine;

import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeoutException;

import io.github.ratelimit.Decision;
import io.github.ratelimit.FailureMode;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.web.RateLimitException;
import io.github.ratelimit.web.RateLimitUnavailableException;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The limits of a request's tenants for the policies of a layer, from the {@link RateLimitTenants tenants' source},
 * read and checked by the parser as any policy is ({@link PolicySpec#forTenant}) before a request may count under them.
 */
final class TenantPolicies {

	/** The longest tenant looked up: a longer one is no tenant a source could know. */
	private static final int MAX_TENANT_LENGTH = 256;

	private final RateLimitTenants tenants;

	private final ThrottledWarning failure = new ThrottledWarning(LogFactory.getLog(RateLimitEngine.class));

	TenantPolicies(RateLimitTenants tenants) {
		this.tenants = tenants;
	}

	/** The result of tenant lookups on a thread that may wait: the lookups are bounded by their timeout. */
	static @Nullable RateLimitPolicy[] join(CompletableFuture<@Nullable RateLimitPolicy[]> lookups) {
		try {
			return lookups.join();
		}
		catch (CompletionException ex) {
			if (ex.getCause() instanceof RateLimitException rejection) {
				throw rejection;
			}
			throw ex;
		}
	}

	/**
	 * Look up the limits of the request's tenant for each policy of the layer that has a tenant expression: by
	 * index, the tenant's policy, or {@code null} for the policy's own. {@code null} if no policy of the layer has a
	 * tenant for this request. A lookup that fails or times out follows the policy's failure mode: {@code allow} and
	 * {@code local} decide the request under the policy's own limits (never uncounted: a client naming new tenants
	 * faster than they can be looked up must not pass unlimited), {@code deny} fails the stage with a 503.
	 */
	@Nullable CompletableFuture<@Nullable RateLimitPolicy[]> lookup(PolicySpec[] specs, RequestScope scope) {
		CompletableFuture<?>[] lookups = null;
		for (int i = 0; i < specs.length; i++) {
			PolicySpec spec = specs[i];
			String tenant = spec.hasTenant() ? spec.tenant(scope) : null;
			if (tenant == null || tenant.length() > MAX_TENANT_LENGTH) {
				continue; // no tenant, or none a source could know: the policy's own limits
			}
			if (lookups == null) {
				lookups = new CompletableFuture<?>[specs.length];
			}
			CompletableFuture<RateLimitTenants.Resolved> looked = this.tenants.lookup(spec.policy().name(), tenant);
			// A known tenant's policy not built for the policy as it counts now is built off the request's thread:
			// no request parses a policy.
			boolean built = looked.isDone() && !looked.isCompletedExceptionally() && looked.join().isBuiltFor(spec);
			lookups[i] = built ? looked.handle((resolved, failure) -> tenantPolicy(spec, tenant, resolved, failure))
					: looked.handleAsync((resolved, failure) -> tenantPolicy(spec, tenant, resolved, failure),
							this.tenants.builds());
		}
		if (lookups == null) {
			return null;
		}
		CompletableFuture<?>[] all = lookups;
		CompletableFuture<?>[] started = Arrays.stream(all).filter((lookup) -> lookup != null)
			.toArray(CompletableFuture<?>[]::new);
		return CompletableFuture.allOf(started).thenApply((ignored) -> {
			RateLimitPolicy[] policies = new RateLimitPolicy[all.length];
			for (int i = 0; i < all.length; i++) {
				policies[i] = (all[i] != null) ? (RateLimitPolicy) all[i].join() : null;
			}
			return policies;
		});
	}

	private @Nullable RateLimitPolicy tenantPolicy(PolicySpec spec, String tenant,
			RateLimitTenants.@Nullable Resolved resolved, @Nullable Throwable failure) {
		String problem;
		if (failure == null && resolved != null) {
			try {
				return resolved.policy(spec, tenant);
			}
			catch (InvalidRateLimitPolicyException | IllegalArgumentException ex) {
				problem = "gave invalid limits " + resolved.limits + " (" + ex.getMessage() + ")";
			}
		}
		else {
			Throwable cause = (failure instanceof CompletionException && failure.getCause() != null)
					? failure.getCause() : failure;
			problem = (cause instanceof TimeoutException) ? "did not answer in time" : "failed (" + cause + ")";
		}
		RateLimitPolicy policy = spec.policy();
		this.failure.warn("The limits of a tenant of rate limit policy '" + policy.name()
				+ "' are unknown: the tenant limits source " + problem + "; failure mode " + policy.failureMode());
		if (policy.failureMode() == FailureMode.DENY) {
			throw new RateLimitUnavailableException(policy, new Decision(false, policy.capacity(), 0, 0, 1_000,
					Decision.Origin.FAIL_CLOSED));
		}
		return null;
	}

}
