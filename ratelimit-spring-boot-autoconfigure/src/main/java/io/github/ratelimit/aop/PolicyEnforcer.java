package io.github.ratelimit.aop;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntSupplier;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.limiter.Admission;
import io.github.ratelimit.limiter.RateLimiter;
import io.github.ratelimit.observation.DefaultRateLimitObservationConvention;
import io.github.ratelimit.observation.RateLimitObservationContext;
import io.github.ratelimit.observation.RateLimitObservationConvention;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.web.AppliedRateLimit;
import io.github.ratelimit.web.ClientIpResolver;
import io.github.ratelimit.web.ClientExemptions;
import io.github.ratelimit.web.RateLimitException;
import io.github.ratelimit.web.RateLimitExceededException;
import io.github.ratelimit.web.RateLimitHeadersWriter;
import io.github.ratelimit.web.RateLimitPlanResolver;
import io.github.ratelimit.web.RateLimitStatus;
import io.github.ratelimit.web.RateLimitUnavailableException;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Decides one layer's policies for a request (a method's, or the filter layer's): exempt clients and skip
 * conditions first, then every enforced policy together, all or nothing, and shadow policies apart; writes the
 * headers and the request attribute, and rejects by throwing. What a policy counting by outcome took is settled once
 * the outcome is known. Shared by the method interceptor and the servlet filter, so both layers behave alike.
 */
final class PolicyEnforcer {

	private static final Log logger = LogFactory.getLog(PolicyEnforcer.class);

	private static final RateLimitObservationConvention DEFAULT_CONVENTION = new DefaultRateLimitObservationConvention();

	private static final Comparator<AppliedRateLimit> MOST_RESTRICTIVE_FIRST = PolicyEnforcer::compareRestrictiveness;

	private static final long UNKNOWN_PLAN_LOG_INTERVAL_NANOS = 60_000_000_000L;

	/** The request attribute holding what the filter layer took, for the method layer. */
	static final String FILTER_LAYER_ATTRIBUTE = PolicyEnforcer.class.getName() + ".filterLayer";

	private final RateLimiter rateLimiter;

	private final RateLimitHeadersWriter headersWriter;

	private final ClientIpResolver clientIpResolver;

	private final RateLimitedMethodRegistry registry;

	private final String storeName;

	/**
	 * Whether a decision's observation is opened in scope while the store decides: so that what a remote store does
	 * (a Redis command's span) is its child. The in-memory store does nothing observable, and a scope costs.
	 */
	private final boolean scoped;

	private final ShadowReporter shadowReporter;

	private final MethodPolicy.ClientIpSupplier clientIp = this::clientIp;

	private ObservationRegistry observationRegistry = ObservationRegistry.NOOP;

	private @Nullable RateLimitObservationConvention observationConvention;

	private @Nullable RateLimitPlanResolver planResolver;

	private ClientExemptions exempt = ClientExemptions.NONE;

	private boolean afterFilterLayer;

	private final AtomicLong unknownPlanLoggedAt = new AtomicLong(System.nanoTime() - UNKNOWN_PLAN_LOG_INTERVAL_NANOS);

	private final AtomicLong planFailureLoggedAt = new AtomicLong(System.nanoTime() - UNKNOWN_PLAN_LOG_INTERVAL_NANOS);

	private final AtomicLong costFailureLoggedAt = new AtomicLong(System.nanoTime() - UNKNOWN_PLAN_LOG_INTERVAL_NANOS);

	private final AtomicLong clientIpFailureLoggedAt = new AtomicLong(
			System.nanoTime() - UNKNOWN_PLAN_LOG_INTERVAL_NANOS);

	PolicyEnforcer(RateLimitedMethodRegistry registry, RateLimiter rateLimiter, RateLimitHeadersWriter headersWriter,
			ClientIpResolver clientIpResolver) {
		this.registry = registry;
		this.rateLimiter = rateLimiter;
		this.headersWriter = headersWriter;
		this.clientIpResolver = clientIpResolver;
		this.storeName = storeName(rateLimiter.store());
		this.scoped = !rateLimiter.store().isLocal();
		this.shadowReporter = new ShadowReporter(rateLimiter.listener());
	}

	void setObservationRegistry(ObservationRegistry observationRegistry,
			@Nullable RateLimitObservationConvention convention) {
		this.observationRegistry = observationRegistry;
		this.observationConvention = convention;
	}

	void setPlanResolver(@Nullable RateLimitPlanResolver planResolver) {
		this.planResolver = planResolver;
	}

	void setExempt(ClientExemptions exempt) {
		this.exempt = exempt;
	}

	boolean hasExemptions() {
		return !this.exempt.isEmpty();
	}

	MethodPolicy.ClientIpSupplier clientIp() {
		return this.clientIp;
	}

	/**
	 * Decide one policy that counts every request, with no skip, plan or exemption: the common case, kept small.
	 * @throws RateLimitException if it rejects the request
	 */
	void admitOne(MethodPolicy only, InvocationScope scope, @Nullable HttpServletRequest request,
			@Nullable HttpServletResponse response) {
		Held earlier = earlierLayer(request);
		if (earlier != null && earlier.decided(only.policy().name())) {
			return; // a shared policy the filter layer drew already: once per request
		}
		// The cost first: a cost that turns out invalid must fail the request before the policy counts it.
		long cost = cost(only, scope);
		if (cost == 0) {
			return; // its cost expression failed, and its failure mode lets the request pass uncounted
		}
		String key = only.key(scope);
		RateLimitPolicy policy = only.policy();
		Decision decision = decide(policy, key, cost);
		publish(request, response, List.of(new AppliedRateLimit(policy, decision, only.isSharedByEveryClient())));
		if (!decision.allowed()) {
			// The filter layer keeps what it took: it counts every request that reaches it.
			throw rejection(policy, decision, List.of(policy.name()));
		}
	}

	/** What the filter layer took for this request, if it ran. */
	private @Nullable Held earlierLayer(@Nullable HttpServletRequest request) {
		if (!this.afterFilterLayer || request == null) {
			return null;
		}
		return (request.getAttribute(FILTER_LAYER_ATTRIBUTE) instanceof Held held) ? held : null;
	}

	/**
	 * Say whether a filter layer runs before this one: then policies it drew are not drawn again.
	 */
	void setAfterFilterLayer(boolean afterFilterLayer) {
		this.afterFilterLayer = afterFilterLayer;
	}

	/**
	 * Decide the policies of one layer: every enforced one together, all or nothing; shadow ones apart, never
	 * rejecting.
	 * @return what the request holds, to settle once its outcome is known
	 * @throws RateLimitException if an enforced policy rejects the request
	 */
	Held admit(MethodPolicy[] policies, InvocationScope scope, @Nullable HttpServletRequest request,
			@Nullable HttpServletResponse response) {
		Held earlier = earlierLayer(request);
		String plan = null;
		boolean planResolved = false;
		List<MethodPolicy> enforced = new ArrayList<>(policies.length);
		List<Acquisition> acquisitions = new ArrayList<>(policies.length);
		List<MethodPolicy> shadows = new ArrayList<>(0);
		List<Acquisition> shadowAcquisitions = new ArrayList<>(0);
		// Keys and costs first: a cost that turns out invalid must fail the request before any policy counts it.
		for (MethodPolicy policy : policies) {
			if (isExempt(policy, scope) || policy.skips(scope)
					|| (earlier != null && earlier.decided(policy.policy().name()))) {
				continue;
			}
			if (policy.isPlanned() && !planResolved) {
				plan = plan(request);
				planResolved = true;
			}
			long cost = cost(policy, scope);
			if (cost == 0) {
				continue; // its cost expression failed, and its failure mode lets the request pass uncounted
			}
			Acquisition acquisition = new Acquisition(policy.policy(plan), policy.key(scope), cost);
			(policy.shadow() ? shadows : enforced).add(policy);
			(policy.shadow() ? shadowAcquisitions : acquisitions).add(acquisition);
		}
		Admission admission = acquisitions.isEmpty() ? null : decideAll(acquisitions, false);
		List<AppliedRateLimit> applied = new ArrayList<>(acquisitions.size());
		List<AppliedRateLimit> rejected = new ArrayList<>(1);
		if (admission != null) {
			for (int i = 0; i < acquisitions.size(); i++) {
				Decision decision = admission.decision(i);
				if (decision != null) {
					AppliedRateLimit limit = new AppliedRateLimit(acquisitions.get(i).policy(), decision,
							enforced.get(i).isSharedByEveryClient());
					applied.add(limit);
					if (!decision.allowed()) {
						rejected.add(limit);
					}
				}
			}
		}
		if (!rejected.isEmpty()) {
			// The rejection that lasts longest leads: retrying sooner would only be rejected again.
			rejected.sort(Comparator.comparingLong(AppliedRateLimit::retryAfterSeconds)
				.reversed());
			applied.removeAll(rejected);
			applied.sort(MOST_RESTRICTIVE_FIRST);
			applied.addAll(0, rejected);
			publish(request, response, applied);
			// The filter layer keeps what it took: it counts every request that reaches it.
			AppliedRateLimit first = rejected.get(0);
			throw rejection(first.policy(), first.decision(),
					rejected.stream().map((limit) -> limit.policy().name()).toList());
		}
		// Shadow policies only once the request is admitted: what they report is what they would have rejected of
		// the traffic that passes.
		List<Admission> shadowAdmissions = new ArrayList<>(shadows.size());
		for (int i = 0; i < shadows.size(); i++) {
			Admission shadow = decideAll(List.of(shadowAcquisitions.get(i)), true);
			shadowAdmissions.add(shadow);
			Decision decision = shadow.decision(0);
			if (decision != null && !decision.allowed()) {
				this.shadowReporter.rejected(shadowAcquisitions.get(i).policy(), decision);
			}
		}

		if (!applied.isEmpty()) {
			applied.sort(MOST_RESTRICTIVE_FIRST);
			publish(request, response, applied);
		}
		return new Held(enforced, admission, shadows, shadowAdmissions);
	}

	/**
	 * The request's cost under a policy; when its cost expression throws, what the policy's failure mode says: 0
	 * for {@code allow} (the policy lets the request pass uncounted), 1 for {@code local} (counted at the least a
	 * request costs), a 503 for {@code deny}.
	 * @throws RateLimitException if the policy fails closed
	 */
	private long cost(MethodPolicy policy, InvocationScope scope) {
		try {
			return policy.cost(scope);
		}
		catch (CostSource.ExpressionFailure ex) {
			RateLimitPolicy failed = policy.policy();
			warnOfFailure(this.costFailureLoggedAt, "The cost expression of rate limit policy '" + failed.name()
					+ "' failed (" + ex.getCause() + "); failure mode " + failed.failureMode());
			return switch (failed.failureMode()) {
				case ALLOW -> 0;
				case LOCAL -> 1;
				case DENY -> throw new RateLimitUnavailableException(failed, new Decision(false, failed.capacity(), 0,
						0, 1_000, Decision.Origin.FAIL_CLOSED));
			};
		}
	}

	private boolean isExempt(MethodPolicy policy, InvocationScope scope) {
		return !this.exempt.isEmpty() && policy.isKeyedByClientIp() && this.exempt.contains(scope.clientIp());
	}

	/**
	 * The plan of this request: the resolver's if it is known, else the default plan (also when the resolver fails:
	 * a plan looked up in a database that is down must not fail every request).
	 */
	private @Nullable String plan(@Nullable HttpServletRequest request) {
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
		String plan = this.registry.effectivePlan(resolved);
		if (resolved != null && !resolved.equals(plan)) {
			long now = System.nanoTime();
			long last = this.unknownPlanLoggedAt.get();
			if (now - last >= UNKNOWN_PLAN_LOG_INTERVAL_NANOS && this.unknownPlanLoggedAt.compareAndSet(last, now)) {
				logger.warn("Rate limit plan resolver gave plan '" + resolved + "', which is not configured under "
						+ "ratelimit.plans; using " + ((plan != null) ? "the default plan '" + plan + "'"
								: "the policies as declared (no ratelimit.default-plan)")
						+ " (logged at most once a minute)");
			}
		}
		return plan;
	}

	private static RuntimeException rejection(RateLimitPolicy policy, Decision decision, List<String> violated) {
		if (decision.origin() == Decision.Origin.FAIL_CLOSED) {
			return new RateLimitUnavailableException(policy, decision);
		}
		return new RateLimitExceededException(policy, decision, violated);
	}

	private Decision decide(RateLimitPolicy policy, String key, long cost) {
		if (this.observationRegistry.isNoop()) {
			return this.rateLimiter.tryAcquire(policy, key, cost);
		}
		RateLimitObservationContext context = new RateLimitObservationContext(policy, this.storeName);
		Observation observation = Observation
			.createNotStarted(this.observationConvention, DEFAULT_CONVENTION, () -> context, this.observationRegistry)
			.start();
		Observation.Scope scope = this.scoped ? observation.openScope() : null;
		try {
			Decision decision = this.rateLimiter.tryAcquire(policy, key, cost);
			context.setDecision(decision);
			return decision;
		}
		catch (RuntimeException ex) {
			observation.error(ex);
			throw ex;
		}
		finally {
			if (scope != null) {
				scope.close();
			}
			observation.stop();
		}
	}

	private Admission decideAll(List<Acquisition> acquisitions, boolean shadow) {
		if (this.observationRegistry.isNoop()) {
			return this.rateLimiter.tryAcquireAll(acquisitions);
		}
		List<RateLimitObservationContext> contexts = new ArrayList<>(acquisitions.size());
		List<Observation> observations = new ArrayList<>(acquisitions.size());
		for (Acquisition acquisition : acquisitions) {
			RateLimitObservationContext context = new RateLimitObservationContext(acquisition.policy(), this.storeName);
			context.setShadow(shadow);
			contexts.add(context);
			observations.add(Observation
				.createNotStarted(this.observationConvention, DEFAULT_CONVENTION, () -> context, this.observationRegistry)
				.start());
		}
		// One scope, the first decision's, is what a remote store's calls (one script for all) belong to.
		Observation.Scope scope = this.scoped ? observations.get(0).openScope() : null;
		try {
			Admission admission = this.rateLimiter.tryAcquireAll(acquisitions);
			for (int i = 0; i < contexts.size(); i++) {
				Decision decision = admission.decision(i);
				if (decision != null) {
					contexts.get(i).setDecision(decision);
				}
				else {
					contexts.get(i).setNotDecided();
				}
			}
			return admission;
		}
		catch (RuntimeException ex) {
			observations.forEach((observation) -> observation.error(ex));
			throw ex;
		}
		finally {
			if (scope != null) {
				scope.close();
			}
			observations.forEach(Observation::stop);
		}
	}

	/**
	 * Make the limits known: as the request attribute (with those of an earlier layer: the filter's) and as headers,
	 * the most restrictive of every layer first.
	 */
	private void publish(@Nullable HttpServletRequest request, @Nullable HttpServletResponse response,
			List<AppliedRateLimit> applied) {
		List<AppliedRateLimit> all = applied;
		if (request != null) {
			Object earlier = request.getAttribute(RateLimitStatus.ATTRIBUTE);
			if (earlier instanceof List<?> list && !list.isEmpty()) {
				all = new ArrayList<>(applied);
				for (Object limit : list) {
					if (limit instanceof AppliedRateLimit appliedLimit) {
						all.add(appliedLimit);
					}
				}
				boolean rejected = !applied.get(0).decision().allowed();
				all.sort(rejected ? Comparator.comparing((AppliedRateLimit limit) -> limit.decision().allowed())
						: MOST_RESTRICTIVE_FIRST);
			}
			request.setAttribute(RateLimitStatus.ATTRIBUTE, List.copyOf(all));
		}
		if (response != null && !all.isEmpty()) {
			this.headersWriter.writeHeaders(response, all);
		}
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

	private String clientIp(InvocationScope scope) {
		HttpServletRequest request = scope.request();
		if (request == null) {
			return MethodPolicy.NO_REQUEST_KEY;
		}
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
		return (address != null && !address.isEmpty()) ? address : MethodPolicy.NO_REQUEST_KEY;
	}

	private static void warnOfFailure(AtomicLong loggedAt, String message) {
		long now = System.nanoTime();
		long last = loggedAt.get();
		if (now - last >= UNKNOWN_PLAN_LOG_INTERVAL_NANOS && loggedAt.compareAndSet(last, now)) {
			logger.warn(message + " (logged at most once a minute)");
		}
	}

	private static String storeName(RateLimitStore store) {
		String type = store.getClass().getSimpleName();
		return switch (type) {
			case "InMemoryRateLimitStore" -> "memory";
			case "RedisRateLimitStore" -> "redis";
			case "DynamoDbRateLimitStore" -> "dynamodb";
			default -> type;
		};
	}

	/**
	 * What an admitted request holds: settled once its outcome is known, giving back the units of policies that do
	 * not count that outcome.
	 */
	static final class Held {

		private final List<MethodPolicy> enforced;

		private final @Nullable Admission admission;

		private final List<MethodPolicy> shadows;

		private final List<Admission> shadowAdmissions;

		Held(List<MethodPolicy> enforced, @Nullable Admission admission, List<MethodPolicy> shadows,
				List<Admission> shadowAdmissions) {
			this.enforced = enforced;
			this.admission = admission;
			this.shadows = shadows;
			this.shadowAdmissions = shadowAdmissions;
		}

		/** Whether this layer decided the named policy (a shared one the method layer must not draw again). */
		boolean decided(String policy) {
			for (MethodPolicy decided : this.enforced) {
				if (decided.policy().name().equals(policy)) {
					return true;
				}
			}
			for (MethodPolicy decided : this.shadows) {
				if (decided.policy().name().equals(policy)) {
					return true;
				}
			}
			return false;
		}

		/** Whether a policy of this layer counts only some outcomes, so that the outcome must be known. */
		boolean countsByOutcome() {
			for (MethodPolicy policy : this.enforced) {
				if (policy.countOn() != null) {
					return true;
				}
			}
			for (MethodPolicy policy : this.shadows) {
				if (policy.countOn() != null) {
					return true;
				}
			}
			return false;
		}

		/**
		 * Give back what policies that do not count this outcome took, in one store call for the enforced ones.
		 * @param status the outcome's HTTP status, asked only if a policy counts by outcome
		 */
		void settle(IntSupplier status) {
			int outcome = -1;
			int[] refunds = new int[this.enforced.size()];
			int count = 0;
			for (int i = 0; i < this.enforced.size(); i++) {
				CountOn countOn = this.enforced.get(i).countOn();
				if (countOn != null && this.admission != null) {
					outcome = (outcome >= 0) ? outcome : status.getAsInt();
					if (!countOn.counts(outcome)) {
						refunds[count++] = i;
					}
				}
			}
			if (count > 0 && this.admission != null) {
				this.admission.refund(Arrays.copyOf(refunds, count));
			}
			for (int i = 0; i < this.shadows.size(); i++) {
				CountOn countOn = this.shadows.get(i).countOn();
				if (countOn != null) {
					outcome = (outcome >= 0) ? outcome : status.getAsInt();
					if (!countOn.counts(outcome)) {
						this.shadowAdmissions.get(i).refund(0);
					}
				}
			}
		}

	}

}
