package io.github.ratelimit.engine;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.Supplier;

import io.github.ratelimit.Decision;
import io.github.ratelimit.FailureMode;
import io.github.ratelimit.PolicyMode;
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
import io.github.ratelimit.web.RateLimitExceededException;
import io.github.ratelimit.web.RateLimitHeadersWriter;
import io.github.ratelimit.web.RateLimitPlanResolver;
import io.github.ratelimit.web.RateLimitRequest;
import io.github.ratelimit.web.RateLimitStatus;
import io.github.ratelimit.web.RateLimitUnavailableException;
import io.micrometer.observation.ObservationRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpHeaders;
import org.springframework.http.server.PathContainer;
import org.springframework.web.ErrorResponseException;

/**
 * Decides the rate limits of a request, whatever the web stack: the filter layer's (the filters that match the
 * request, with the shared policies they draw) before dispatch, then a {@code @RateLimited} method's. Within a layer,
 * exempt clients and skip conditions first, then every enforced policy together, all or nothing, and shadow policies
 * apart; what a layer takes stays taken whatever a later layer decides. The answer is a {@link RateLimitOutcome} for
 * the web stack to write back. What a policy counting by outcome took is settled once the outcome is known
 * ({@link #settle}).
 *
 * @since 0.2.0
 */
public final class RateLimitEngine {

	/** What {@link #cost} gives for a cost expression that threw: the request counts as the capacity. */
	private static final long FAILED_COST = -1;

	private static final Log logger = LogFactory.getLog(RateLimitEngine.class);

	private static final Comparator<AppliedRateLimit> MOST_RESTRICTIVE_FIRST = RateLimitEngine::compareRestrictiveness;

	private static final long WARN_INTERVAL_NANOS = 60_000_000_000L;

	/** The request attribute holding what the filter layer took, for the method layer. */
	private static final String FILTER_LAYER_ATTRIBUTE = RateLimitEngine.class.getName() + ".filterLayer";

	private static final PolicySpec[] NO_SPECS = new PolicySpec[0];

	private final PolicyCatalog catalog;

	private final ObservedLimiter limiter;

	private final RateLimitHeadersWriter headersWriter;

	private final ClientIpResolver clientIpResolver;

	private final @Nullable RateLimitPlanResolver planResolver;

	private final ClientExemptions exempt;

	private final ShadowReporter shadowReporter;

	private final @Nullable RateLimitTenants tenants;

	private final @Nullable HeavyHitters heavyHitters;

	private final Function<RateLimitRequest, String> clientIp = this::clientIp;

	private final AtomicLong unknownPlanLoggedAt = new AtomicLong(System.nanoTime() - WARN_INTERVAL_NANOS);

	private final AtomicLong planFailureLoggedAt = new AtomicLong(System.nanoTime() - WARN_INTERVAL_NANOS);

	private final AtomicLong costFailureLoggedAt = new AtomicLong(System.nanoTime() - WARN_INTERVAL_NANOS);

	private final AtomicLong clientIpFailureLoggedAt = new AtomicLong(System.nanoTime() - WARN_INTERVAL_NANOS);

	private final AtomicLong tenantFailureLoggedAt = new AtomicLong(System.nanoTime() - WARN_INTERVAL_NANOS);

	/** The longest tenant looked up: a longer one is no tenant a source could know. */
	private static final int MAX_TENANT_LENGTH = 256;

	private RateLimitEngine(Builder builder) {
		this.catalog = builder.catalog;
		this.limiter = new ObservedLimiter(builder.rateLimiter, builder.observationRegistry,
				builder.observationConvention);
		this.headersWriter = builder.headersWriter;
		this.clientIpResolver = builder.clientIpResolver;
		this.planResolver = builder.planResolver;
		this.exempt = builder.exempt;
		this.shadowReporter = new ShadowReporter(builder.rateLimiter.listener());
		this.tenants = builder.tenants;
		this.heavyHitters = builder.heavyHitters;
	}

	/**
	 * Return who is being limited: the heaviest keys of each policy lately.
	 * @return the sketches, or {@code null} if the engine keeps none
	 */
	public @Nullable HeavyHitters heavyHitters() {
		return this.heavyHitters;
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
		PolicySpec[] specs = filtersFor(request.getMethod(), paths);
		if (specs.length == 0) {
			return RateLimitOutcome.NONE;
		}
		RequestScope scope = RequestScope.ofRequest(request, this.catalog.beanResolver(), this.clientIp);
		try {
			return afterFilterLayer(request, decideLayer(specs, scope, request, null));
		}
		catch (RateLimitException | InvalidRateLimitCostException ex) {
			return refused(ex);
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
		PolicySpec[] specs = filtersFor(request.getMethod(), paths);
		if (specs.length == 0) {
			return CompletableFuture.completedFuture(RateLimitOutcome.NONE);
		}
		RequestScope scope = RequestScope.ofRequest(request, this.catalog.beanResolver(), this.clientIp);
		try {
			return decideLayerAsync(specs, scope, request, null)
				.thenApply((outcome) -> afterFilterLayer(request, outcome));
		}
		catch (RateLimitException | InvalidRateLimitCostException ex) {
			return CompletableFuture.completedFuture(refused(ex));
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
			if (limits.single && this.exempt.isEmpty() && !limits.specs[0].hasTenant()) {
				return decideOne(limits.specs[0], scope, request, earlier);
			}
			return decideLayer(limits.specs, scope, request, earlier);
		}
		catch (RateLimitException | InvalidRateLimitCostException ex) {
			return refused(ex);
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
			return CompletableFuture.completedFuture(refused(ex));
		}
	}

	/**
	 * Decide one policy for a key the web stack resolved itself (a gateway route's key resolver) rather than the
	 * policy's key expression, without waiting for the store. With the request, the policy's cost, skip condition,
	 * plans and shadow mode apply as on any layer, and client exemptions when the key is the client's address; what a
	 * policy counting by outcome took is left to the web stack's settlement of the request. Without it, the request
	 * costs one unit.
	 * @param spec the policy, from {@link PolicyCatalog#declare}
	 * @param key the key; one that starts with the character no client key may start with is kept apart from them
	 * @param request the current request, or {@code null} if the web stack has none
	 * @return a stage that completes with the outcome
	 */
	public CompletionStage<RateLimitOutcome> decideKeyAsync(PolicySpec spec, String key,
			@Nullable RateLimitRequest request) {
		RequestScope scope = new RequestScope(RequestScope.NO_ARGUMENTS, RequestScope.NO_NAMES, request,
				this.catalog.beanResolver(), this.clientIp);
		try {
			return recovered(planAsync(new PolicySpec[] { spec }, scope, request, null, PolicySpec.escaped(key))
				.thenCompose((plan) -> decidePlanAsync(plan, request))
				.thenApply((outcome) -> {
					if (!outcome.isRejected() && request != null) {
						Settlements.defer(request, outcome.held());
					}
					return outcome;
				}));
		}
		catch (RateLimitException | InvalidRateLimitCostException ex) {
			return CompletableFuture.completedFuture(refused(ex));
		}
	}

	private static @Nullable LayerHold filterLayer(@Nullable RateLimitRequest request) {
		return (request != null && request.getAttribute(FILTER_LAYER_ATTRIBUTE) instanceof LayerHold held) ? held
				: null;
	}

	/**
	 * A request refused before any policy counted it: a cost that is not a whole number (400), or a cost expression
	 * that failed under a policy that fails closed (503).
	 */
	private static RateLimitOutcome refused(ErrorResponseException ex) {
		HttpHeaders headers = new HttpHeaders();
		if (ex instanceof RateLimitException rejection) {
			rejection.applyRetryAfter(headers);
		}
		return new RateLimitOutcome(List.of(), headers, ex, LayerHold.NONE);
	}

	/**
	 * Settle what an admitted method's policies took, once it returned or threw: the costs known after the response,
	 * from what it returned ({@code #result}, {@code null} if it threw) and what the handler reported
	 * ({@code #reported}); what policies that count by outcome took, left to the web stack when it settles the
	 * request from the status the client gets ({@link #settledByStack}), else at once from what the method returned
	 * or threw (a returned {@code ResponseEntity}'s status, a thrown exception's, the method's
	 * {@code @ResponseStatus}, or 200).
	 * @param outcome the method layer's outcome
	 * @param request the current request, or {@code null}
	 * @param method the method
	 * @param result what it returned, or {@code null}
	 * @param failure what it threw, or {@code null}
	 */
	public void settle(RateLimitOutcome outcome, @Nullable RateLimitRequest request, Method method,
			@Nullable Object result, @Nullable Throwable failure) {
		LayerHold held = outcome.held();
		if (held == LayerHold.NONE) {
			return;
		}
		// A method that threw still cost what it reported before: it may have done the work it reports.
		held.settleCosts((failure == null) ? result : null, Settlements.reported(request), failure == null);
		if (!Settlements.defer(request, held)) {
			held.settle(() -> CountOn.statusOf(method, result, failure)).toCompletableFuture().join();
		}
	}

	/**
	 * Settle what an admitted method's policies took once the request completes, for a result the web stack serves
	 * after the method returns (Spring MVC's asynchronous results: an {@code SseEmitter}, a
	 * {@code StreamingResponseBody}, a {@code DeferredResult}, a {@code CompletableFuture}, a {@code Callable}): the
	 * costs known after the response from what the handler reported by then ({@code #reported}) and the value the
	 * result completed with ({@code #result}: a {@code CompletionStage}'s or a {@code DeferredResult}'s, else
	 * {@code null}), then what counts by outcome from the status the client got. Left to the web stack's settlement
	 * of the request ({@link #settledByStack}, {@link #settleRequest}); without it, settled at once as
	 * {@link #settle} does.
	 * @param outcome the method layer's outcome
	 * @param request the current request, or {@code null}
	 * @param method the method
	 * @param result what it returned
	 * @since 0.3.0
	 */
	public void settleWhenRequestCompletes(RateLimitOutcome outcome, @Nullable RateLimitRequest request, Method method,
			@Nullable Object result) {
		if (!Settlements.deferUntilComplete(request, outcome.held(), result)) {
			settle(outcome, request, method, result, null);
		}
	}

	/**
	 * Settle what an admitted method's policies that count by outcome took, as {@link #settle} does, without waiting
	 * for the store.
	 * @param outcome the method layer's outcome
	 * @param request the current request, or {@code null}
	 * @param method the method
	 * @param result what it returned, or {@code null}
	 * @param failure what it threw, or {@code null}
	 * @return a stage that completes once settled, or at once when the web stack settles the request; never
	 * exceptionally
	 */
	public CompletionStage<Void> settleAsync(RateLimitOutcome outcome, @Nullable RateLimitRequest request, Method method,
			@Nullable Object result, @Nullable Throwable failure) {
		LayerHold held = outcome.held();
		if (held == LayerHold.NONE || Settlements.defer(request, held)) {
			return CompletableFuture.completedFuture(null);
		}
		return held.settle(() -> CountOn.statusOf(method, result, failure));
	}

	/**
	 * Return whether an outcome holds a reservation that a cost known after the response settles (a policy with a
	 * {@code settle} expression): what a non-blocking stack asks before it arranges to call {@link #settleCosts} off
	 * its event loop.
	 * @param outcome the method layer's outcome
	 * @return whether {@link #settleCosts} has anything to do
	 */
	public boolean settlesCosts(RateLimitOutcome outcome) {
		return outcome.held().settlesCosts();
	}

	/**
	 * Settle the reservations of the policies whose cost is known once the result ended, as {@link #settle} does;
	 * a call to the store, to be made where the thread may wait. A result that failed or was cancelled is settled from
	 * what the handler reported until then ({@code #reported}), with {@code #result} {@code null}.
	 * @param outcome the method layer's outcome
	 * @param request the current request, or {@code null}
	 * @param result what the method produced: its value, or a single-valued stream's element; {@code null} for none
	 * @param completed whether the result completed, rather than failed or was cancelled
	 */
	public void settleCosts(RateLimitOutcome outcome, @Nullable RateLimitRequest request, @Nullable Object result,
			boolean completed) {
		outcome.held().settleCosts(result, Settlements.reported(request), completed);
	}

	/**
	 * Say that the web stack settles this request's policies that count by outcome, from the status the client gets,
	 * by calling {@link #settleRequest} once the response is complete.
	 * @param request the request, as it starts
	 */
	public void settledByStack(RateLimitRequest request) {
		Settlements.settledByStack(request);
	}

	/**
	 * Return whether a request's layers hold units that its outcome settles.
	 * @param request the request
	 * @return whether {@link #settleRequest} has anything to do
	 */
	public boolean hasPendingSettlement(RateLimitRequest request) {
		return Settlements.pending(request);
	}

	/**
	 * Settle every layer's policies that count by outcome, from the status the client got.
	 * @param request the request
	 * @param status the response's status
	 */
	public void settleRequest(RateLimitRequest request, int status) {
		Settlements.settle(request, status).toCompletableFuture().join();
	}

	/**
	 * Settle every layer's policies that count by outcome as {@link #settleRequest} does, without waiting for the
	 * store.
	 * @param request the request
	 * @param status the response's status
	 * @return a stage that completes once settled; never exceptionally (a store that fails keeps the units)
	 */
	public CompletionStage<Void> settleRequestAsync(RateLimitRequest request, int status) {
		return Settlements.settle(request, status);
	}

	/** The policies of every filter that applies, then the shared ones they draw, each once. */
	private PolicySpec[] filtersFor(String method, List<PathContainer> paths) {
		List<FilterRule> rules = this.catalog.filters();
		if (rules.isEmpty()) {
			return NO_SPECS;
		}
		Map<String, PolicySpec> specs = null;
		for (FilterRule rule : rules) {
			if (rule.appliesTo(method) && matchesAny(rule, paths)) {
				if (specs == null) {
					specs = new LinkedHashMap<>();
				}
				specs.putIfAbsent(rule.spec().policy().name(), rule.spec());
			}
		}
		if (specs == null) {
			return NO_SPECS;
		}
		List<PolicySpec> all = new ArrayList<>(specs.values());
		for (FilterRule rule : rules) {
			if (specs.containsKey(rule.name())) {
				for (PolicySpec shared : rule.shared()) {
					if (all.stream().noneMatch((spec) -> spec.policy().name().equals(shared.policy().name()))) {
						all.add(shared);
					}
				}
			}
		}
		return all.toArray(NO_SPECS);
	}

	private static boolean matchesAny(FilterRule rule, List<PathContainer> paths) {
		for (PathContainer path : paths) {
			if (rule.matches(path)) {
				return true;
			}
		}
		return false;
	}

	/** One policy that counts every request, with no skip, plan or exemption: the common case, kept small. */
	private RateLimitOutcome decideOne(PolicySpec spec, RequestScope scope, @Nullable RateLimitRequest request,
			@Nullable LayerHold earlier) {
		if (!spec.isEnabled() || (earlier != null && earlier.decided(spec.policy().name()))) {
			return RateLimitOutcome.NONE; // disabled, or a shared policy the filter layer drew already
		}
		// The cost first: a cost that turns out invalid must fail the request before the policy counts it.
		long cost = cost(spec, scope);
		RateLimitPolicy policy = spec.policy();
		if (cost == FAILED_COST) {
			cost = policy.capacity();
		}
		String key = spec.key(scope);
		Decision decision = this.limiter.decide(policy, key, cost);
		if (this.heavyHitters != null) {
			this.heavyHitters.record(policy.name(), key, decision.allowed());
		}
		List<AppliedRateLimit> applied = List.of(new AppliedRateLimit(policy, decision, spec.isSharedByEveryClient()));
		RateLimitException rejection = decision.allowed() ? null : rejection(policy, decision, List.of(policy.name()));
		return outcome(request, applied, rejection, LayerHold.NONE);
	}

	/**
	 * Decide the policies of one layer: every enforced one together, all or nothing; shadow ones apart, never
	 * rejecting.
	 */
	private RateLimitOutcome decideLayer(PolicySpec[] specs, RequestScope scope, @Nullable RateLimitRequest request,
			@Nullable LayerHold earlier) {
		CompletableFuture<@Nullable RateLimitPolicy[]> lookups = tenantPolicies(specs, scope);
		LayerPlan plan = planLayer(specs, scope, request, earlier, null, (lookups != null) ? join(lookups) : null);
		Admission admission = plan.acquisitions.isEmpty() ? null : this.limiter.decideAll(plan.acquisitions, false);
		List<AppliedRateLimit> applied = applied(plan, admission);
		RateLimitOutcome rejected = rejected(request, applied);
		if (rejected != null) {
			return rejected;
		}
		// Shadow policies only once the request is admitted: what they report is what they would have rejected of
		// the traffic that passes.
		List<Admission> shadowAdmissions = new ArrayList<>(plan.shadows.size());
		for (Acquisition shadow : plan.shadowAcquisitions) {
			shadowAdmissions.add(this.limiter.decideAll(List.of(shadow), true));
		}
		return admitted(request, plan, admission, applied, shadowAdmissions);
	}

	/**
	 * Decide the policies of one layer as {@link #decideLayer} does, without waiting for the store.
	 */
	private CompletionStage<RateLimitOutcome> decideLayerAsync(PolicySpec[] specs, RequestScope scope,
			@Nullable RateLimitRequest request, @Nullable LayerHold earlier) {
		Executor offLoop = applicationCodeExecutor(specs, request);
		if (offLoop != null) {
			return recovered(planOffLoop(specs, scope, request, earlier, null, offLoop)
				.thenCompose((plan) -> decidePlanAsync(plan, request)));
		}
		CompletableFuture<@Nullable RateLimitPolicy[]> lookups = tenantPolicies(specs, scope);
		if (lookups == null) {
			return decidePlanAsync(planLayer(specs, scope, request, earlier, null, null), request);
		}
		return recovered(lookups.thenCompose((tenantPolicies) -> decidePlanAsync(
				planLayer(specs, scope, request, earlier, null, tenantPolicies), request)));
	}

	/** The plan of a layer once its tenants' limits are known, without waiting for them. */
	private CompletionStage<LayerPlan> planAsync(PolicySpec[] specs, RequestScope scope,
			@Nullable RateLimitRequest request, @Nullable LayerHold earlier, @Nullable String key) {
		Executor offLoop = applicationCodeExecutor(specs, request);
		return (offLoop != null) ? planOffLoop(specs, scope, request, earlier, key, offLoop)
				: planHere(specs, scope, request, earlier, key);
	}

	private CompletableFuture<LayerPlan> planHere(PolicySpec[] specs, RequestScope scope,
			@Nullable RateLimitRequest request, @Nullable LayerHold earlier, @Nullable String key) {
		CompletableFuture<@Nullable RateLimitPolicy[]> lookups = tenantPolicies(specs, scope);
		if (lookups == null) {
			return CompletableFuture.completedFuture(planLayer(specs, scope, request, earlier, key, null));
		}
		return lookups.thenApply((tenantPolicies) -> planLayer(specs, scope, request, earlier, key, tenantPolicies));
	}

	/**
	 * Plan a layer (tenants, keys, costs, skips, the plan) where the application's code may block, for a request whose
	 * own thread must not: the store is then asked from there, and the web stack returns to its thread once the store
	 * answers. A tenant lookup answered later (on the tenants' pool, or by the timer of its timeout) hands the plan
	 * back to the executor, so the application's code never runs on the one timer thread every timeout shares. An
	 * executor that refuses the work (saturated) fails the layer closed, 503: planning on the event loop would block
	 * it, and admitting unplanned would let a client that saturates the executor pass every limit.
	 */
	private CompletionStage<LayerPlan> planOffLoop(PolicySpec[] specs, RequestScope scope,
			@Nullable RateLimitRequest request, @Nullable LayerHold earlier, @Nullable String key, Executor executor) {
		// All in the executor's task: a stage composed after it could run on the calling thread, if the task was done.
		return onExecutor(() -> {
			CompletableFuture<@Nullable RateLimitPolicy[]> lookups = tenantPolicies(specs, scope);
			if (lookups == null || lookups.isDone()) {
				return CompletableFuture.completedFuture(
						planLayer(specs, scope, request, earlier, key, (lookups != null) ? join(lookups) : null));
			}
			return lookups.thenCompose((tenantPolicies) -> onExecutor(
					() -> planLayer(specs, scope, request, earlier, key, tenantPolicies), specs, executor));
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
	private @Nullable Executor applicationCodeExecutor(PolicySpec[] specs, @Nullable RateLimitRequest request) {
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

	/** A refusal that surfaced while the stage ran (a tenant lookup that failed closed, an invalid cost): answered. */
	private static CompletionStage<RateLimitOutcome> recovered(CompletionStage<RateLimitOutcome> stage) {
		return stage.handle((outcome, failure) -> {
			if (failure == null) {
				return CompletableFuture.completedFuture(outcome);
			}
			Throwable cause = (failure instanceof CompletionException && failure.getCause() != null)
					? failure.getCause() : failure;
			if (cause instanceof RateLimitException || cause instanceof InvalidRateLimitCostException) {
				return CompletableFuture.completedFuture(refused((ErrorResponseException) cause));
			}
			return CompletableFuture.<RateLimitOutcome>failedFuture(cause);
		}).thenCompose((result) -> result);
	}

	/** The result of tenant lookups on a thread that may wait: the lookups are bounded by their timeout. */
	private static @Nullable RateLimitPolicy[] join(CompletableFuture<@Nullable RateLimitPolicy[]> lookups) {
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
	private @Nullable CompletableFuture<@Nullable RateLimitPolicy[]> tenantPolicies(PolicySpec[] specs,
			RequestScope scope) {
		RateLimitTenants tenants = this.tenants;
		if (tenants == null) {
			return null;
		}
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
			lookups[i] = tenants.lookup(spec.policy().name(), tenant)
				.handle((resolved, failure) -> tenantPolicy(spec, tenant, resolved, failure));
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
				RateLimitPolicy policy = resolved.policy(spec.policy(), spec.declaredPolicy(), tenant);
				if (policy != null) {
					this.catalog.checkSupported(policy);
					if (spec.hasSettle() && !PolicyParser.carriesDebt(policy.algorithm())) {
						throw new IllegalArgumentException("a policy that settles its cost after the response needs "
								+ "an algorithm that keeps a debt, not " + policy.algorithm());
					}
				}
				return policy;
			}
			catch (IllegalArgumentException ex) {
				problem = "gave invalid limits " + resolved.limits + " (" + ex.getMessage() + ")";
			}
		}
		else {
			Throwable cause = (failure instanceof CompletionException && failure.getCause() != null)
					? failure.getCause() : failure;
			problem = (cause instanceof TimeoutException) ? "did not answer in time" : "failed (" + cause + ")";
		}
		RateLimitPolicy policy = spec.policy();
		warnOfFailure(this.tenantFailureLoggedAt, "The limits of a tenant of rate limit policy '" + policy.name()
				+ "' are unknown: the tenant limits source " + problem + "; failure mode " + policy.failureMode());
		if (policy.failureMode() == FailureMode.DENY) {
			throw new RateLimitUnavailableException(policy, new Decision(false, policy.capacity(), 0, 0, 1_000,
					Decision.Origin.FAIL_CLOSED));
		}
		return null;
	}

	private CompletionStage<RateLimitOutcome> decidePlanAsync(LayerPlan plan, @Nullable RateLimitRequest request) {
		CompletionStage<@Nullable Admission> decided = plan.acquisitions.isEmpty()
				? CompletableFuture.completedFuture(null) : this.limiter.decideAllAsync(plan.acquisitions, false);
		return decided.thenCompose((admission) -> {
			List<AppliedRateLimit> applied = applied(plan, admission);
			RateLimitOutcome rejected = rejected(request, applied);
			if (rejected != null) {
				return CompletableFuture.completedFuture(rejected);
			}
			List<CompletableFuture<Admission>> shadows = new ArrayList<>(plan.shadows.size());
			for (Acquisition shadow : plan.shadowAcquisitions) {
				shadows.add(this.limiter.decideAllAsync(List.of(shadow), true).toCompletableFuture());
			}
			return CompletableFuture.allOf(shadows.toArray(new CompletableFuture<?>[0]))
				.thenApply((ignored) -> admitted(request, plan, admission, applied,
						shadows.stream().map(CompletableFuture::join).toList()));
		});
	}

	/** What one layer asks the limiter, once exemptions, skips, keys, costs and the plan are known. */
	private record LayerPlan(RequestScope scope, List<PolicySpec> enforced, List<Acquisition> acquisitions,
			List<PolicySpec> shadows,
			List<Acquisition> shadowAcquisitions) {
	}

	/**
	 * @param key the key every policy of the layer counts, resolved by the web stack, or {@code null} for each
	 * policy's own key expression
	 */
	private LayerPlan planLayer(PolicySpec[] specs, RequestScope scope, @Nullable RateLimitRequest request,
			@Nullable LayerHold earlier, @Nullable String key, @Nullable RateLimitPolicy @Nullable [] tenantPolicies) {
		String plan = null;
		boolean planResolved = false;
		List<PolicySpec> enforced = new ArrayList<>(specs.length);
		List<Acquisition> acquisitions = new ArrayList<>(specs.length);
		List<PolicySpec> shadows = new ArrayList<>(0);
		List<Acquisition> shadowAcquisitions = new ArrayList<>(0);
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
				plan = plan(request);
				planResolved = true;
			}
			long cost = cost(spec, scope);
			// A tenant's own limits are the most specific: they apply whatever the request's plan.
			RateLimitPolicy policy = (tenantPolicy != null) ? tenantPolicy : spec.policy(plan);
			if (cost == FAILED_COST) {
				cost = policy.capacity(); // the capacity of the limits that apply
			}
			Acquisition acquisition = new Acquisition(policy, (key != null) ? key : spec.key(scope), cost);
			boolean shadow = policy.mode() == PolicyMode.SHADOW;
			(shadow ? shadows : enforced).add(spec);
			(shadow ? shadowAcquisitions : acquisitions).add(acquisition);
		}
		return new LayerPlan(scope, enforced, acquisitions, shadows, shadowAcquisitions);
	}

	/** The limits the enforced policies' admission applied, in the order asked. */
	private List<AppliedRateLimit> applied(LayerPlan plan, @Nullable Admission admission) {
		List<AppliedRateLimit> applied = new ArrayList<>(plan.acquisitions.size());
		if (admission != null) {
			for (int i = 0; i < plan.acquisitions.size(); i++) {
				Decision decision = admission.decision(i);
				if (decision != null) {
					if (this.heavyHitters != null) {
						Acquisition acquisition = plan.acquisitions.get(i);
						this.heavyHitters.record(acquisition.policy().name(), acquisition.key(), decision.allowed());
					}
					applied.add(new AppliedRateLimit(plan.acquisitions.get(i).policy(), decision,
							plan.enforced.get(i).isSharedByEveryClient()));
				}
			}
		}
		return applied;
	}

	/** The outcome of a layer some limit rejected, or {@code null} if none did. */
	private @Nullable RateLimitOutcome rejected(@Nullable RateLimitRequest request, List<AppliedRateLimit> applied) {
		List<AppliedRateLimit> rejected = new ArrayList<>(1);
		for (AppliedRateLimit limit : applied) {
			if (!limit.decision().allowed()) {
				rejected.add(limit);
			}
		}
		if (rejected.isEmpty()) {
			return null;
		}
		// The rejection that lasts longest leads: retrying sooner would only be rejected again. What earlier layers
		// took stays taken: each counts every request that reaches it.
		rejected.sort(Comparator.comparingLong(AppliedRateLimit::retryAfterSeconds).reversed());
		List<AppliedRateLimit> all = new ArrayList<>(applied);
		all.removeAll(rejected);
		all.sort(MOST_RESTRICTIVE_FIRST);
		all.addAll(0, rejected);
		AppliedRateLimit first = rejected.get(0);
		return outcome(request, all, rejection(first.policy(), first.decision(),
				rejected.stream().map((limit) -> limit.policy().name()).toList()), LayerHold.NONE);
	}

	/** The outcome of an admitted layer, once its shadow policies are decided too. */
	private RateLimitOutcome admitted(@Nullable RateLimitRequest request, LayerPlan plan,
			@Nullable Admission admission, List<AppliedRateLimit> applied, List<Admission> shadowAdmissions) {
		for (int i = 0; i < shadowAdmissions.size(); i++) {
			Decision decision = shadowAdmissions.get(i).decision(0);
			if (decision != null && !decision.allowed()) {
				this.shadowReporter.rejected(plan.shadowAcquisitions.get(i).policy(), decision);
			}
		}
		List<AppliedRateLimit> sorted = new ArrayList<>(applied);
		sorted.sort(MOST_RESTRICTIVE_FIRST);
		return outcome(request, sorted, null,
				new LayerHold(plan.scope, plan.enforced, admission, plan.shadows, shadowAdmissions));
	}

	/**
	 * The outcome of a layer, with the limits of earlier layers (the filter's): as the request attribute that
	 * {@link RateLimitStatus} reads and as headers, the rejecting or else the most restrictive of every layer first.
	 */
	private RateLimitOutcome outcome(@Nullable RateLimitRequest request, List<AppliedRateLimit> applied,
			@Nullable RateLimitException rejection, LayerHold held) {
		if (applied.isEmpty() && rejection == null) {
			// Nothing to show (every policy skipped, exempt or in shadow mode), but what was decided is held.
			return (held == LayerHold.NONE) ? RateLimitOutcome.NONE
					: new RateLimitOutcome(List.of(), HttpHeaders.EMPTY, null, held);
		}
		List<AppliedRateLimit> all = applied;
		if (request != null) {
			// Layers of one request may finish on different threads (two calls of a reactive request, zipped).
			synchronized (request) {
				if (request.getAttribute(RateLimitStatus.ATTRIBUTE) instanceof List<?> list && !list.isEmpty()) {
					all = new ArrayList<>(applied);
					for (Object limit : list) {
						if (limit instanceof AppliedRateLimit appliedLimit) {
							all.add(appliedLimit);
						}
					}
					all.sort((rejection != null)
							? Comparator.comparing((AppliedRateLimit limit) -> limit.decision().allowed())
							: MOST_RESTRICTIVE_FIRST);
				}
				all = List.copyOf(all);
				request.setAttribute(RateLimitStatus.ATTRIBUTE, all);
			}
		}
		HttpHeaders headers = new HttpHeaders();
		if (!all.isEmpty()) {
			this.headersWriter.writeHeaders(headers, all);
		}
		if (rejection != null) {
			rejection.applyRetryAfter(headers);
		}
		return new RateLimitOutcome(List.copyOf(all), headers, rejection, held);
	}

	/**
	 * The request's cost under a policy; when its cost expression throws, {@link #FAILED_COST}: the capacity of the
	 * limits that apply, the largest cost that can pass (under {@code allow} and {@code local}), or a 503 (under
	 * {@code deny}). What made it throw may be the request's own input, which its client chooses: counted at the most
	 * any request can cost, a client gains nothing by making it throw, while a failing bean the expression calls still
	 * lets each client through once its whole capacity is free, instead of failing every request.
	 * @throws RateLimitException if the policy fails closed
	 */
	private long cost(PolicySpec spec, RequestScope scope) {
		try {
			return spec.cost(scope);
		}
		catch (CostSource.ExpressionFailure ex) {
			RateLimitPolicy failed = spec.policy();
			warnOfFailure(this.costFailureLoggedAt, "The cost expression of rate limit policy '" + failed.name()
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
	private @Nullable String plan(@Nullable RateLimitRequest request) {
		String resolved = null;
		if (this.planResolver != null && request != null) {
			try {
				resolved = this.planResolver.resolvePlan(request);
			}
			catch (RuntimeException ex) {
				warnOfFailure(this.planFailureLoggedAt, "Rate limit plan resolver failed (" + ex + "); deciding under "
						+ "the default plan");
			}
		}
		String plan = this.catalog.effectivePlan(resolved);
		if (resolved != null && !resolved.equals(plan)) {
			warnOfFailure(this.unknownPlanLoggedAt, "Rate limit plan resolver gave plan '" + resolved + "', which is "
					+ "not configured under ratelimit.plans; using " + ((plan != null) ? "the default plan '" + plan
							+ "'" : "the policies as declared (no ratelimit.default-plan)"));
		}
		return plan;
	}

	private static RateLimitException rejection(RateLimitPolicy policy, Decision decision, List<String> violated) {
		if (decision.origin() == Decision.Origin.FAIL_CLOSED) {
			return new RateLimitUnavailableException(policy, decision);
		}
		return new RateLimitExceededException(policy, decision, violated);
	}

	/** Known decisions first, then fewer remaining units, then a later reset. */
	private static int compareRestrictiveness(AppliedRateLimit first, AppliedRateLimit second) {
		Decision a = first.decision();
		Decision b = second.decision();
		if (a.isKnown() != b.isKnown()) {
			return a.isKnown() ? -1 : 1;
		}
		int byRemaining = Long.compare(a.remaining(), b.remaining());
		return (byRemaining != 0) ? byRemaining : Long.compare(b.resetAfterMillis(), a.resetAfterMillis());
	}

	private String clientIp(RateLimitRequest request) {
		String address;
		try {
			address = this.clientIpResolver.resolve(request);
		}
		catch (RuntimeException ex) {
			// The connection's peer: what a client cannot choose, rather than a 500 for every request.
			warnOfFailure(this.clientIpFailureLoggedAt, "Client IP resolver failed (" + ex + "); the connection's "
					+ "peer address is the key");
			address = request.getRemoteAddr();
		}
		return (address != null && !address.isEmpty()) ? address : PolicySpec.NO_REQUEST_KEY;
	}

	private static void warnOfFailure(AtomicLong loggedAt, String message) {
		long now = System.nanoTime();
		long last = loggedAt.get();
		if (now - last >= WARN_INTERVAL_NANOS && loggedAt.compareAndSet(last, now)) {
			logger.warn(message + " (logged at most once a minute)");
		}
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
