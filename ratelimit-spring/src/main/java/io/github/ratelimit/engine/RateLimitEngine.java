package io.github.ratelimit.engine;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.function.Function;

import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.limiter.Admission;
import io.github.ratelimit.limiter.RateLimiter;
import io.github.ratelimit.observation.RateLimitObservationConvention;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.web.AppliedRateLimit;
import io.github.ratelimit.web.ClientExemptions;
import io.github.ratelimit.web.ClientIpResolver;
import io.github.ratelimit.web.InvalidRateLimitCostException;
import io.github.ratelimit.web.RateLimitException;
import io.github.ratelimit.web.RateLimitHeadersWriter;
import io.github.ratelimit.web.RateLimitPlanResolver;
import io.github.ratelimit.web.RateLimitRequest;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;

import org.springframework.http.server.PathContainer;
import org.springframework.web.ErrorResponseException;

/**
 * Decides the rate limits of a request, whatever the web stack: the filter layer's (the filters that match the
 * request, with the shared policies they draw) before dispatch, then a {@code @RateLimited} method's. Within a layer,
 * exempt clients and skip conditions first, then every enforced policy together, all or nothing, and shadow policies
 * apart; what a layer takes stays taken whatever a later layer decides. The answer is a {@link RateLimitOutcome} for
 * the web stack to write back. What a policy counting by outcome took is settled once the outcome is known
 * ({@link RateLimitSettlement}).
 *
 * @since 0.2.0
 */
public final class RateLimitEngine {

	/** The request attribute holding what the filter layer took, for the method layer. */
	private static final String FILTER_LAYER_ATTRIBUTE = RateLimitEngine.class.getName() + ".filterLayer";

	private final PolicyCatalog catalog;

	private final ObservedLimiter limiter;

	private final LayerPlanner planner;

	private final LayerOutcomes outcomes;

	private final @Nullable HeavyHitters heavyHitters;

	private final RateLimitLockouts lockouts;

	private final Waits waits;

	private final Function<RateLimitRequest, String> clientIp;

	private RateLimitEngine(Builder builder) {
		this.catalog = builder.catalog;
		this.limiter = new ObservedLimiter(builder.rateLimiter, builder.observationRegistry,
				builder.observationConvention);
		this.lockouts = new RateLimitLockouts(builder.rateLimiter);
		this.waits = new Waits(builder.rateLimiter.listener());
		this.planner = new LayerPlanner(builder.catalog, builder.planResolver, builder.exempt, builder.tenants,
				this.waits);
		this.outcomes = new LayerOutcomes(builder.headersWriter, new ShadowReporter(builder.rateLimiter.listener()),
				builder.heavyHitters, this.lockouts);
		this.heavyHitters = builder.heavyHitters;
		this.clientIp = new ClientIps(builder.clientIpResolver)::resolve;
	}

	/**
	 * Return who is being limited: the heaviest keys of each policy lately.
	 * @return the sketches, or {@code null} if the engine keeps none
	 */
	public @Nullable HeavyHitters heavyHitters() {
		return this.heavyHitters;
	}

	/**
	 * Return the lock-outs of the penalty groups: who is locked out, and how to unlock them.
	 * @return the lock-outs
	 * @since 0.5.0
	 */
	public RateLimitLockouts lockouts() {
		return this.lockouts;
	}

	/**
	 * Start building an engine.
	 * @param catalog the policies
	 * @param rateLimiter the limiter that decides them
	 * @param headersWriter the writer of the response headers
	 * @param clientIpResolver the resolver of the client's address
	 * @return a builder
	 */
	public static Builder builder(PolicyCatalog catalog, RateLimiter rateLimiter, RateLimitHeadersWriter headersWriter,
			ClientIpResolver clientIpResolver) {
		return new Builder(catalog, rateLimiter, headersWriter, clientIpResolver);
	}

	/**
	 * Return the policies this engine decides.
	 * @return the catalogue
	 */
	public PolicyCatalog catalog() {
		return this.catalog;
	}

	/**
	 * Decide the filter layer for a request: every filter that applies to its method and one of its paths, with the
	 * shared policies they draw.
	 * @param request the request
	 * @param paths the request's path within the application, and any other spelling of it the web stack's handler
	 * mappings may match (a path the container normalized)
	 * @return the outcome; without headers or rejection if no filter applies
	 */
	public RateLimitOutcome decideFilters(RateLimitRequest request, List<PathContainer> paths) {
		PolicySpec[] specs = FilterRule.specsFor(this.catalog.filters(), request.getMethod(), paths);
		if (specs.length == 0) {
			return RateLimitOutcome.NONE;
		}
		RequestScope scope = RequestScope.ofRequest(request, this.catalog.beanResolver(), this.clientIp);
		try {
			return afterFilterLayer(request, decideLayer(specs, scope, request, null));
		}
		catch (RateLimitException | InvalidRateLimitCostException ex) {
			return LayerOutcomes.refused(ex);
		}
	}

	/**
	 * Decide the filter layer for a request as {@link #decideFilters} does, without waiting for the store (see
	 * {@link RateLimiter#tryAcquireAllAsync}): what a non-blocking web stack asks on its event loop.
	 * @param request the request
	 * @param paths the request's path within the application, and any other spelling of it
	 * @return a stage that completes with the outcome
	 */
	public CompletionStage<RateLimitOutcome> decideFiltersAsync(RateLimitRequest request, List<PathContainer> paths) {
		PolicySpec[] specs = FilterRule.specsFor(this.catalog.filters(), request.getMethod(), paths);
		if (specs.length == 0) {
			return CompletableFuture.completedFuture(RateLimitOutcome.NONE);
		}
		RequestScope scope = RequestScope.ofRequest(request, this.catalog.beanResolver(), this.clientIp);
		try {
			return decideLayerAsync(specs, scope, request, null)
				.thenApply((outcome) -> afterFilterLayer(request, outcome));
		}
		catch (RateLimitException | InvalidRateLimitCostException ex) {
			return CompletableFuture.completedFuture(LayerOutcomes.refused(ex));
		}
	}

	/** Keep what an admitted filter layer took, for the method layer and for the request's settlement. */
	private static RateLimitOutcome afterFilterLayer(RateLimitRequest request, RateLimitOutcome outcome) {
		if (!outcome.isRejected()) {
			request.setAttribute(FILTER_LAYER_ATTRIBUTE, outcome.held());
			Settlements.defer(request, outcome.held());
		}
		return outcome;
	}

	/**
	 * Decide a {@code @RateLimited} method's policies for one invocation.
	 * @param method the method invoked
	 * @param targetClass the class of the instance it is invoked on
	 * @param arguments its arguments, for key and cost expressions
	 * @param request the current request, or {@code null} outside of one
	 * @return the outcome, or {@code null} if the method is not rate limited
	 */
	public @Nullable RateLimitOutcome decideMethod(Method method, Class<?> targetClass, Object[] arguments,
			@Nullable RateLimitRequest request) {
		MethodLimits limits = this.catalog.lookup(method, targetClass);
		if (limits == null || limits.isEmpty()) {
			return null;
		}
		RequestScope scope = new RequestScope(arguments, limits.parameterNames, request, this.catalog.beanResolver(),
				this.clientIp);
		LayerHold earlier = filterLayer(request);
		try {
			if (limits.single && this.planner.exemptsNoClient() && !limits.specs[0].hasTenant()) {
				return decideOne(limits.specs[0], scope, request, earlier);
			}
			return decideLayer(limits.specs, scope, request, earlier);
		}
		catch (RateLimitException | InvalidRateLimitCostException ex) {
			return LayerOutcomes.refused(ex);
		}
	}

	/**
	 * Decide a {@code @RateLimited} method's policies for one invocation as {@link #decideMethod} does, without
	 * waiting for the store: what a non-blocking web stack asks when the method's result is subscribed.
	 * @param method the method invoked
	 * @param targetClass the class of the instance it is invoked on
	 * @param arguments its arguments, for key and cost expressions
	 * @param request the current request, or {@code null} outside of one
	 * @return a stage that completes with the outcome, {@link RateLimitOutcome#NONE} if the method is not rate
	 * limited
	 */
	public CompletionStage<RateLimitOutcome> decideMethodAsync(Method method, Class<?> targetClass, Object[] arguments,
			@Nullable RateLimitRequest request) {
		MethodLimits limits = this.catalog.lookup(method, targetClass);
		if (limits == null || limits.isEmpty()) {
			return CompletableFuture.completedFuture(RateLimitOutcome.NONE);
		}
		RequestScope scope = new RequestScope(arguments, limits.parameterNames, request, this.catalog.beanResolver(),
				this.clientIp);
		try {
			return decideLayerAsync(limits.specs, scope, request, filterLayer(request));
		}
		catch (RateLimitException | InvalidRateLimitCostException ex) {
			return CompletableFuture.completedFuture(LayerOutcomes.refused(ex));
		}
	}

	/**
	 * Decide one policy for a key the web stack resolved itself (a gateway route's key resolver) or by its key
	 * expression, without waiting for the store. With the request, its cost, skip condition, plans and shadow mode
	 * apply as on any layer, and client exemptions when the key is the client's address; what counts by outcome is left
	 * to the web stack's settlement of the request. Without it, the request costs one unit.
	 * @param spec the policy, from {@link PolicyCatalog#declare}
	 * @param key the key (kept apart from clients' if it starts with the reserved character), or {@code null}
	 * @param request the current request, or {@code null} if the web stack has none
	 * @return a stage that completes with the outcome
	 */
	public CompletionStage<RateLimitOutcome> decideKeyAsync(PolicySpec spec, @Nullable String key,
			@Nullable RateLimitRequest request) {
		RequestScope scope = new RequestScope(RequestScope.NO_ARGUMENTS, RequestScope.NO_NAMES, request,
				this.catalog.beanResolver(), this.clientIp);
		try {
			String given = (key != null) ? PolicySpec.escaped(key) : null;
			return recovered(this.planner.planAsync(new PolicySpec[] { spec }, scope, request, null, given)
				.thenCompose((plan) -> decidePlanAsync(plan, request, true))
				.thenApply((outcome) -> {
					if (!outcome.isRejected() && (request == null || !Settlements.defer(request, outcome.held()))) {
						outcome.held().release(); // no stack gives a slot back at the end: none is held past here
					}
					return outcome;
				}));
		}
		catch (RateLimitException | InvalidRateLimitCostException ex) {
			return CompletableFuture.completedFuture(LayerOutcomes.refused(ex));
		}
	}

	private static @Nullable LayerHold filterLayer(@Nullable RateLimitRequest request) {
		return (request != null && request.getAttribute(FILTER_LAYER_ATTRIBUTE) instanceof LayerHold held) ? held
				: null;
	}

	/**
	 * Return what settles the policies of admitted requests once their outcome is known: the costs known after the
	 * response, and what counts by outcome.
	 * @return the settlement
	 * @since 0.3.0
	 */
	public RateLimitSettlement settlement() {
		return RateLimitSettlement.INSTANCE;
	}

	/** One policy that counts every request, with no skip, plan or exemption: the common case, kept small. */
	private RateLimitOutcome decideOne(PolicySpec spec, RequestScope scope, @Nullable RateLimitRequest request,
			@Nullable LayerHold earlier) {
		if (!spec.isEnabled() || (earlier != null && earlier.decided(spec.policy().name()))) {
			return RateLimitOutcome.NONE; // disabled, or a shared policy the filter layer drew already
		}
		// The cost first: a cost that turns out invalid must fail the request before the policy counts it.
		long cost = this.planner.cost(spec, scope);
		RateLimitPolicy policy = spec.policy();
		if (cost == LayerPlanner.FAILED_COST) {
			cost = policy.capacity();
		}
		String key = spec.key(scope);
		return this.outcomes.single(request, spec, policy, key, this.limiter.decide(policy, key, cost));
	}

	/**
	 * Decide the policies of one layer: every enforced one together, all or nothing; shadow ones apart, never
	 * rejecting.
	 */
	private RateLimitOutcome decideLayer(PolicySpec[] specs, RequestScope scope, @Nullable RateLimitRequest request,
			@Nullable LayerHold earlier) {
		CompletableFuture<@Nullable RateLimitPolicy[]> lookups = this.planner.tenantPolicies(specs, scope);
		LayerPlan plan = this.planner.plan(specs, scope, request, earlier, null,
				(lookups != null) ? TenantPolicies.join(lookups) : null);
		return decidePlan(plan, request, true);
	}

	/**
	 * Decide a planned layer: its enforced policies together, all or nothing, then its shadow ones apart. A request
	 * over a limit with {@code max-wait} waits for its turn here: a bucket's, reserved in the store; a window's, once,
	 * then decided again.
	 */
	private RateLimitOutcome decidePlan(LayerPlan plan, @Nullable RateLimitRequest request, boolean mayRetry) {
		Admission admission = plan.acquisitions().isEmpty() ? null : this.limiter.decideAll(plan.acquisitions(), false);
		List<AppliedRateLimit> applied = this.lockouts
			.applied(plan, admission, this.outcomes.applied(plan, admission), null)
			.toCompletableFuture()
			.join(); // complete: without an executor, a lock-out is made here
		Waits.Wait retry = mayRetry ? this.waits.retry(plan, admission, applied) : null;
		if (retry != null && this.waits.waitHere(plan, retry)) {
			return decidePlan(plan, request, false); // a window's request that waited for room: decided once more
		}
		RateLimitOutcome rejected = this.outcomes.rejected(request, applied);
		if (rejected != null) {
			return rejected;
		}
		Waits.Wait wait = (admission != null) ? this.waits.reserved(plan, admission) : null;
		if (wait != null && !this.waits.waitHere(plan, wait)) {
			return this.outcomes.refused(request, plan, admission, wait, applied);
		}
		// Shadow policies only once the request is admitted: what they report is what they would have rejected of
		// the traffic that passes.
		List<Admission> shadowAdmissions = new ArrayList<>(plan.shadows().size());
		for (Acquisition shadow : plan.shadowAcquisitions()) {
			shadowAdmissions.add(this.limiter.decideAll(List.of(shadow), true));
		}
		return this.outcomes.admitted(request, plan, admission, applied, shadowAdmissions);
	}

	/**
	 * Decide the policies of one layer as {@link #decideLayer} does, without waiting for the store.
	 */
	private CompletionStage<RateLimitOutcome> decideLayerAsync(PolicySpec[] specs, RequestScope scope,
			@Nullable RateLimitRequest request, @Nullable LayerHold earlier) {
		Executor offLoop = this.planner.applicationCodeExecutor(specs, request);
		if (offLoop != null) {
			return recovered(this.planner.planOffLoop(specs, scope, request, earlier, null, offLoop)
				.thenCompose((plan) -> decidePlanAsync(plan, request, true)));
		}
		CompletableFuture<@Nullable RateLimitPolicy[]> lookups = this.planner.tenantPolicies(specs, scope);
		if (lookups == null) {
			return decidePlanAsync(this.planner.plan(specs, scope, request, earlier, null, null), request, true);
		}
		return recovered(lookups.thenCompose((tenantPolicies) -> decidePlanAsync(
				this.planner.plan(specs, scope, request, earlier, null, tenantPolicies), request, true)));
	}

	/** A refusal that surfaced while the stage ran (a tenant lookup that failed closed, an invalid cost): answered. */
	private static CompletionStage<RateLimitOutcome> recovered(CompletionStage<RateLimitOutcome> stage) {
		return stage.handle((outcome, failure) -> {
			if (failure == null) {
				return CompletableFuture.completedFuture(outcome);
			}
			Throwable cause = (failure instanceof CompletionException && failure.getCause() != null)
					? failure.getCause() : failure;
			if (cause instanceof RateLimitException || cause instanceof InvalidRateLimitCostException) {
				return CompletableFuture.completedFuture(LayerOutcomes.refused((ErrorResponseException) cause));
			}
			return CompletableFuture.<RateLimitOutcome>failedFuture(cause);
		}).thenCompose((result) -> result);
	}

	/** Decide a planned layer as {@link #decidePlan} does, waiting without blocking a thread. */
	private CompletionStage<RateLimitOutcome> decidePlanAsync(LayerPlan plan, @Nullable RateLimitRequest request,
			boolean mayRetry) {
		CompletionStage<@Nullable Admission> decided = plan.acquisitions().isEmpty()
				? CompletableFuture.completedFuture(null) : this.limiter.decideAllAsync(plan.acquisitions(), false);
		Executor executor = (request != null) ? request.applicationCodeExecutor() : null;
		return decided.thenCompose((admission) -> this.lockouts
			.applied(plan, admission, this.outcomes.applied(plan, admission), executor)
			.thenCompose((applied) -> {
				Waits.Wait retry = mayRetry ? this.waits.retry(plan, admission, applied) : null;
				CompletableFuture<Void> room = (retry != null) ? this.waits.waitLater(plan, retry) : null;
				if (room != null) {
					return room.thenCompose((ignored) -> decidePlanAsync(plan, request, false));
				}
				return decided(plan, request, admission, applied, executor);
			}));
	}

	/** The outcome of a layer the limiter decided: rejected, or admitted once its shadow policies are decided. */
	private CompletionStage<RateLimitOutcome> decided(LayerPlan plan, @Nullable RateLimitRequest request,
			@Nullable Admission admission, List<AppliedRateLimit> applied, @Nullable Executor executor) {
		RateLimitOutcome rejected = this.outcomes.rejected(request, applied);
		if (rejected != null) {
			return CompletableFuture.completedFuture(rejected);
		}
		Waits.Wait wait = (admission != null) ? this.waits.reserved(plan, admission) : null;
		CompletableFuture<Void> turn = CompletableFuture.completedFuture(null);
		if (wait != null) {
			CompletableFuture<Void> reserved = this.waits.waitLater(plan, wait);
			if (reserved == null) {
				return CompletableFuture.completedFuture(this.outcomes.refused(request, plan, admission, wait, applied));
			}
			turn = reserved;
		}
		return turn.thenCompose((ignored) -> {
			List<CompletableFuture<Admission>> shadows = new ArrayList<>(plan.shadows().size());
			for (Acquisition shadow : plan.shadowAcquisitions()) {
				shadows.add(this.limiter.decideAllAsync(List.of(shadow), true).toCompletableFuture());
			}
			return CompletableFuture.allOf(shadows.toArray(new CompletableFuture<?>[0]))
				.thenApply((done) -> this.outcomes.admitted(request, plan, admission, applied,
						shadows.stream().map(CompletableFuture::join).toList()));
		});
	}

	/**
	 * Builds a {@link RateLimitEngine}.
	 */
	public static final class Builder {

		private final PolicyCatalog catalog;

		private final RateLimiter rateLimiter;

		private final RateLimitHeadersWriter headersWriter;

		private final ClientIpResolver clientIpResolver;

		private @Nullable RateLimitPlanResolver planResolver;

		private ClientExemptions exempt = ClientExemptions.NONE;

		private ObservationRegistry observationRegistry = ObservationRegistry.NOOP;

		private @Nullable RateLimitObservationConvention observationConvention;

		private @Nullable RateLimitTenants tenants;

		private @Nullable HeavyHitters heavyHitters = new HeavyHitters();

		private Builder(PolicyCatalog catalog, RateLimiter rateLimiter, RateLimitHeadersWriter headersWriter,
				ClientIpResolver clientIpResolver) {
			this.catalog = catalog;
			this.rateLimiter = rateLimiter;
			this.headersWriter = headersWriter;
			this.clientIpResolver = clientIpResolver;
		}

		/**
		 * Choose each request's plan with this resolver (see {@code ratelimit.plans}).
		 * @param planResolver the resolver, or {@code null} for the default plan always
		 * @return this builder
		 */
		public Builder planResolver(@Nullable RateLimitPlanResolver planResolver) {
			this.planResolver = planResolver;
			return this;
		}

		/**
		 * Exempt clients in these networks from every policy keyed by the client IP.
		 * @param exempt the networks
		 * @return this builder
		 */
		public Builder exempt(ClientExemptions exempt) {
			this.exempt = exempt;
			return this;
		}

		/**
		 * Observe every decision ({@code ratelimit.decision}: a timer, and a span where tracing is on).
		 * @param observationRegistry the registry
		 * @param convention the convention, or {@code null} for the default one
		 * @return this builder
		 */
		public Builder observationRegistry(ObservationRegistry observationRegistry,
				@Nullable RateLimitObservationConvention convention) {
			this.observationRegistry = observationRegistry;
			this.observationConvention = convention;
			return this;
		}

		/**
		 * Take the limits of policies with a tenant expression from the tenants' own.
		 * @param tenants the tenants' limits, or {@code null} for every policy's own limits
		 * @return this builder
		 */
		public Builder tenants(@Nullable RateLimitTenants tenants) {
			this.tenants = tenants;
			return this;
		}

		/**
		 * Keep who is being limited: the heaviest keys of each policy lately (on by default).
		 * @param heavyHitters the sketches, or {@code null} to keep none
		 * @return this builder
		 */
		public Builder heavyHitters(@Nullable HeavyHitters heavyHitters) {
			this.heavyHitters = heavyHitters;
			return this;
		}

		/**
		 * Build the engine.
		 * @return the engine
		 */
		public RateLimitEngine build() {
			return new RateLimitEngine(this);
		}

	}

}
