package io.github.ratelimit.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Supplier;

import io.github.ratelimit.Decision;
import io.github.ratelimit.FailureMode;
import io.github.ratelimit.PolicyMode;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.web.ClientExemptions;
import io.github.ratelimit.web.RateLimitException;
import io.github.ratelimit.web.RateLimitPlanResolver;
import io.github.ratelimit.web.RateLimitRequest;
import io.github.ratelimit.web.RateLimitUnavailableException;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Plans a layer: which of its policies apply to the request (enabled, not exempt, not skipped, not decided by an
 * earlier layer), under which limits (the tenant's, the plan's, or the policy's own), with which key and cost. The
 * application's code (key, cost and skip expressions, tenant sources, the plan resolver) runs here, on the executor a
 * non-blocking request names for it.
 */
final class LayerPlanner {

	/** What {@link #cost} gives for a cost expression that threw: the request counts as the capacity. */
	static final long FAILED_COST = -1;

	private static final Log logger = LogFactory.getLog(RateLimitEngine.class);

	private final PolicyCatalog catalog;

	private final @Nullable RateLimitPlanResolver planResolver;

	private final ClientExemptions exempt;

	private final @Nullable TenantPolicies tenants;

	private final Waits waits;

	private final ThrottledWarning unknownPlan = new ThrottledWarning(logger);

	private final ThrottledWarning planFailure = new ThrottledWarning(logger);

	private final ThrottledWarning costFailure = new ThrottledWarning(logger);

	LayerPlanner(PolicyCatalog catalog, @Nullable RateLimitPlanResolver planResolver, ClientExemptions exempt,
			@Nullable RateLimitTenants tenants, Waits waits) {
		this.waits = waits;
		this.catalog = catalog;
		this.planResolver = planResolver;
		this.exempt = exempt;
		this.tenants = (tenants != null) ? new TenantPolicies(tenants) : null;
	}

	/** Whether clients are exempt from policies keyed by their address: none are, most of the time. */
	boolean exemptsNoClient() {
		return this.exempt.isEmpty();
	}

	/**
	 * The limits of the request's tenants for the layer's policies, by index ({@code null} for a policy's own), or
	 * {@code null} when no policy of the layer has a tenant for this request.
	 */
	@Nullable CompletableFuture<@Nullable RateLimitPolicy[]> tenantPolicies(PolicySpec[] specs, RequestScope scope) {
		return (this.tenants != null) ? this.tenants.lookup(specs, scope) : null;
	}

	/** The plan of a layer once its tenants' limits are known, without waiting for them. */
	CompletionStage<LayerPlan> planAsync(PolicySpec[] specs, RequestScope scope,
			@Nullable RateLimitRequest request, @Nullable LayerHold earlier, @Nullable String key) {
		Executor offLoop = applicationCodeExecutor(specs, request);
		return (offLoop != null) ? planOffLoop(specs, scope, request, earlier, key, offLoop)
				: planHere(specs, scope, request, earlier, key);
	}

	private CompletableFuture<LayerPlan> planHere(PolicySpec[] specs, RequestScope scope,
			@Nullable RateLimitRequest request, @Nullable LayerHold earlier, @Nullable String key) {
		CompletableFuture<@Nullable RateLimitPolicy[]> lookups = tenantPolicies(specs, scope);
		if (lookups == null) {
			return CompletableFuture.completedFuture(plan(specs, scope, request, earlier, key, null));
		}
		return lookups.thenApply((tenantPolicies) -> plan(specs, scope, request, earlier, key, tenantPolicies));
	}

	/**
	 * Plan a layer (tenants, keys, costs, skips, the plan) where the application's code may block, for a request whose
	 * own thread must not: the store is then asked from there, and the web stack returns to its thread once the store
	 * answers. A tenant lookup answered later (on the tenants' pool, or by the timer of its timeout) hands the plan
	 * back to the executor, so the application's code never runs on the one timer thread every timeout shares. An
	 * executor that refuses the work (saturated) fails the layer closed, 503: planning on the event loop would block
	 * it, and admitting unplanned would let a client that saturates the executor pass every limit.
	 */
	CompletionStage<LayerPlan> planOffLoop(PolicySpec[] specs, RequestScope scope,
			@Nullable RateLimitRequest request, @Nullable LayerHold earlier, @Nullable String key, Executor executor) {
		// All in the executor's task: a stage composed after it could run on the calling thread, if the task was done.
		return onExecutor(() -> {
			CompletableFuture<@Nullable RateLimitPolicy[]> lookups = tenantPolicies(specs, scope);
			if (lookups == null || lookups.isDone()) {
				return CompletableFuture.completedFuture(
						plan(specs, scope, request, earlier, key, (lookups != null) ? TenantPolicies.join(lookups) : null));
			}
			return lookups.thenCompose((tenantPolicies) -> onExecutor(
					() -> plan(specs, scope, request, earlier, key, tenantPolicies), specs, executor));
		}, specs, executor).thenCompose((plan) -> plan);
	}

	/** The work's result, computed on the executor; a refusal fails it closed for the layer's first policy. */
	private static <T> CompletableFuture<T> onExecutor(Supplier<T> work, PolicySpec[] specs, Executor executor) {
		CompletableFuture<T> result = new CompletableFuture<>();
		try {
			executor.execute(() -> {
				try {
					result.complete(work.get());
				}
				catch (Throwable ex) {
					result.completeExceptionally(ex);
				}
			});
		}
		catch (RejectedExecutionException ex) {
			RateLimitPolicy policy = specs[0].policy();
			result.completeExceptionally(new RateLimitUnavailableException(policy,
					new Decision(false, policy.capacity(), 0, 0, 1_000, Decision.Origin.FAIL_CLOSED)));
		}
		return result;
	}

	/**
	 * Where to plan a layer whose policies run the application's code (or that the plan resolver decides), for a
	 * request that names an executor for it; {@code null} to plan on the calling thread.
	 */
	@Nullable Executor applicationCodeExecutor(PolicySpec[] specs, @Nullable RateLimitRequest request) {
		Executor executor = (request != null) ? request.applicationCodeExecutor() : null;
		if (executor == null) {
			return null;
		}
		for (PolicySpec spec : specs) {
			if (spec.callsApplicationCode() || (this.planResolver != null && spec.isPlanned())) {
				return executor;
			}
		}
		return null;
	}

	/**
	 * @param key the key every policy of the layer counts, resolved by the web stack, or {@code null} for each
	 * policy's own key expression
	 */
	LayerPlan plan(PolicySpec[] specs, RequestScope scope, @Nullable RateLimitRequest request,
			@Nullable LayerHold earlier, @Nullable String key, @Nullable RateLimitPolicy @Nullable [] tenantPolicies) {
		String plan = null;
		boolean planResolved = false;
		List<PolicySpec> enforced = new ArrayList<>(specs.length);
		List<Acquisition> acquisitions = new ArrayList<>(specs.length);
		List<PolicySpec> shadows = new ArrayList<>(0);
		List<Acquisition> shadowAcquisitions = new ArrayList<>(0);
		List<RateLimitPolicy> policies = new ArrayList<>(specs.length);
		// Keys and costs first: a cost that turns out invalid must fail the request before any policy counts it.
		for (int i = 0; i < specs.length; i++) {
			PolicySpec spec = specs[i];
			RateLimitPolicy tenantPolicy = (tenantPolicies != null) ? tenantPolicies[i] : null;
			if (!spec.isEnabled()
					|| ((key != null) ? isExemptKey(key, scope) : isExempt(spec, scope))
					|| spec.skips(scope) || (earlier != null && earlier.decided(spec.policy().name()))) {
				continue;
			}
			if (tenantPolicy == null && spec.isPlanned() && !planResolved) {
				plan = planOf(request);
				planResolved = true;
			}
			long cost = cost(spec, scope);
			// A tenant's own limits are the most specific: they apply whatever the request's plan.
			RateLimitPolicy policy = (tenantPolicy != null) ? tenantPolicy : spec.policy(plan);
			if (cost == FAILED_COST) {
				cost = policy.capacity(); // the capacity of the limits that apply
			}
			boolean shadow = policy.mode() == PolicyMode.SHADOW;
			String counted = (key != null) ? key : spec.key(scope);
			Acquisition acquisition = new Acquisition(counted(spec, policy, counted, cost, shadow), counted, cost);
			if (!shadow) {
				policies.add(policy);
			}
			(shadow ? shadows : enforced).add(spec);
			(shadow ? shadowAcquisitions : acquisitions).add(acquisition);
		}
		int checksFrom = acquisitions.size();
		addPenaltyChecks(enforced, acquisitions);
		return new LayerPlan(scope, enforced, acquisitions, checksFrom, policies, shadows, shadowAcquisitions);
	}

	/**
	 * The limits a request is counted under in the store: for a bucket that lets requests wait, the bucket with its
	 * reserve, unless the key's queue is full or the cost exceeds the real burst (the real bucket then rejects as
	 * without waiting, with its deny cache and its metrics).
	 */
	private RateLimitPolicy counted(PolicySpec spec, RateLimitPolicy policy, String key, long cost, boolean shadow) {
		Waiting waiting = spec.waiting();
		if (waiting == null || shadow || cost > policy.capacity()
				|| this.waits.full(policy.name(), key, waiting.maxQueued())) {
			return policy;
		}
		return waiting.reserving(policy);
	}

	/**
	 * Check each enforced policy's key against its penalty group, in the same call as the policies: one unit of the
	 * group's lock-out bucket, once per group and key.
	 */
	private static void addPenaltyChecks(List<PolicySpec> enforced, List<Acquisition> acquisitions) {
		int own = acquisitions.size();
		for (int i = 0; i < own; i++) {
			Penalty penalty = enforced.get(i).penalty();
			if (penalty != null) {
				String key = penalty.lockKey(acquisitions.get(i).key());
				boolean checked = false;
				for (Acquisition check : acquisitions.subList(own, acquisitions.size())) {
					checked |= check.key().equals(key) && check.policy().name().equals(penalty.lock().name());
				}
				if (!checked) {
					enforced.add(enforced.get(i));
					acquisitions.add(new Acquisition(penalty.lock(), key, 1));
				}
			}
		}
	}


	/**
	 * The request's cost under a policy; when its cost expression throws, {@link #FAILED_COST}: the capacity of the
	 * limits that apply, the largest cost that can pass (under {@code allow} and {@code local}), or a 503 (under
	 * {@code deny}). What made it throw may be the request's own input, which its client chooses: counted at the most
	 * any request can cost, a client gains nothing by making it throw, while a failing bean the expression calls still
	 * lets each client through once its whole capacity is free, instead of failing every request.
	 * @throws RateLimitException if the policy fails closed
	 */
	long cost(PolicySpec spec, RequestScope scope) {
		try {
			return spec.cost(scope);
		}
		catch (CostSource.ExpressionFailure ex) {
			RateLimitPolicy failed = spec.policy();
			this.costFailure.warn("The cost expression of rate limit policy '" + failed.name()
					+ "' failed (" + ex.getCause() + "); " + ((failed.failureMode() == FailureMode.DENY)
							? "failure mode deny: 503" : "counted at the policy's capacity"));
			return switch (failed.failureMode()) {
				case ALLOW, LOCAL -> FAILED_COST;
				case DENY -> throw new RateLimitUnavailableException(failed, new Decision(false, failed.capacity(), 0,
						0, 1_000, Decision.Origin.FAIL_CLOSED));
			};
		}
	}

	private boolean isExempt(PolicySpec spec, RequestScope scope) {
		return !this.exempt.isEmpty() && spec.isKeyedByClientIp() && this.exempt.contains(scope.clientIp());
	}

	/** Whether a key the web stack resolved is the client's address, and that address is exempt. */
	private boolean isExemptKey(String key, RequestScope scope) {
		return !this.exempt.isEmpty() && key.equals(scope.clientIp()) && this.exempt.contains(key);
	}

	/**
	 * The plan of this request: the resolver's if it is configured, else the default plan (also when the resolver
	 * fails: a plan looked up in a database that is down must not fail every request).
	 */
	private @Nullable String planOf(@Nullable RateLimitRequest request) {
		String resolved = null;
		if (this.planResolver != null && request != null) {
			try {
				resolved = this.planResolver.resolvePlan(request);
			}
			catch (RuntimeException ex) {
				this.planFailure.warn("Rate limit plan resolver failed (" + ex + "); deciding under "
						+ "the default plan");
			}
		}
		String plan = this.catalog.effectivePlan(resolved);
		if (resolved != null && !resolved.equals(plan)) {
			this.unknownPlan.warn("Rate limit plan resolver gave plan '" + resolved + "', which is "
					+ "not configured under ratelimit.plans; using " + ((plan != null) ? "the default plan '" + plan
							+ "'" : "the policies as declared (no ratelimit.default-plan)"));
		}
		return plan;
	}

}
