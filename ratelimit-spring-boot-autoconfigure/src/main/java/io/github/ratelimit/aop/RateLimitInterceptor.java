package io.github.ratelimit.aop;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

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
import io.github.ratelimit.web.RateLimitExceededException;
import io.github.ratelimit.web.RateLimitHeadersWriter;
import io.github.ratelimit.web.RateLimitStatus;
import io.github.ratelimit.web.RateLimitUnavailableException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;

import org.springframework.aop.support.AopUtils;
import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;

/**
 * Rate limits an invocation: looks its policies up, asks the {@link RateLimiter} for each, writes the headers, and
 * proceeds or throws. It holds no algorithm, store or HTTP status logic.
 * <p>
 * A request passes only if every enforced policy admits it, and one rejected by any of them takes nothing from any
 * of them (see {@link RateLimiter#tryAcquireAll}). Policies that count by outcome give their unit back after the
 * method ran when its outcome does not count; shadow policies count and report but never reject. The headers show
 * the rejecting policy, or else the one with the fewest units left.
 *
 * @since 0.1.0
 */
public final class RateLimitInterceptor implements MethodInterceptor {

	private final RateLimitedMethodRegistry registry;

	private final RateLimiter rateLimiter;

	private static final RateLimitObservationConvention DEFAULT_CONVENTION = new DefaultRateLimitObservationConvention();

	private static final Comparator<AppliedRateLimit> MOST_RESTRICTIVE_FIRST = RateLimitInterceptor::compareRestrictiveness;

	private final RateLimitHeadersWriter headersWriter;

	private final String storeName;

	private ObservationRegistry observationRegistry = ObservationRegistry.NOOP;

	private @Nullable RateLimitObservationConvention observationConvention;

	private final ClientIpResolver clientIpResolver;

	private final MethodPolicy.ClientIpSupplier clientIp;

	private final ShadowReporter shadowReporter;

	/**
	 * Create an interceptor.
	 * @param registry the policies of every rate limited method
	 * @param rateLimiter the limiter
	 * @param headersWriter the writer of the response headers
	 * @param clientIpResolver the resolver of the client's IP address
	 */
	public RateLimitInterceptor(RateLimitedMethodRegistry registry, RateLimiter rateLimiter,
			RateLimitHeadersWriter headersWriter, ClientIpResolver clientIpResolver) {
		this.registry = registry;
		this.rateLimiter = rateLimiter;
		this.headersWriter = headersWriter;
		this.storeName = storeName(rateLimiter.store());
		this.clientIpResolver = clientIpResolver;
		this.clientIp = this::clientIp;
		this.shadowReporter = new ShadowReporter(rateLimiter.listener());
	}

	@Override
	public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
		Object target = invocation.getThis();
		Class<?> targetClass = (target != null) ? AopUtils.getTargetClass(target)
				: invocation.getMethod().getDeclaringClass();
		MethodRateLimits limits = this.registry.lookup(invocation.getMethod(), targetClass);
		if (limits == null) {
			return invocation.proceed();
		}
		RequestAttributes attributes = RequestContextHolder.getRequestAttributes();
		HttpServletRequest request = null;
		HttpServletResponse response = null;
		if (attributes instanceof ServletRequestAttributes servlet) {
			request = servlet.getRequest();
			response = servlet.getResponse();
		}
		InvocationScope scope = new InvocationScope(invocation.getArguments(), request, limits.parameterNames,
				this.registry.beanResolver());
		if (!limits.single) {
			return invokeAllOrNothing(invocation, limits, scope, request, response);
		}
		MethodPolicy only = limits.policies[0];
		// The cost first: a cost that turns out invalid must fail the request before the policy counts it.
		long cost = only.cost(scope);
		String key = only.key(scope, this.clientIp);
		RateLimitPolicy policy = only.policy();
		Decision decision = decide(policy, key, cost);
		List<AppliedRateLimit> applied = List.of(new AppliedRateLimit(policy, decision));
		publish(request, response, applied);
		if (!decision.allowed()) {
			throw rejection(policy, decision, List.of(policy.name()));
		}
		return invocation.proceed();
	}

	/**
	 * Several policies, or one that counts by outcome, skips or only reports: every enforced one is decided together,
	 * all or nothing; shadow policies on their own, never rejecting; after the method ran, the units of policies that
	 * do not count its outcome are given back.
	 */
	private @Nullable Object invokeAllOrNothing(MethodInvocation invocation, MethodRateLimits limits,
			InvocationScope scope, @Nullable HttpServletRequest request, @Nullable HttpServletResponse response)
			throws Throwable {
		MethodPolicy[] policies = limits.policies;
		List<MethodPolicy> enforced = new ArrayList<>(policies.length);
		List<Acquisition> acquisitions = new ArrayList<>(policies.length);
		List<MethodPolicy> shadows = new ArrayList<>(0);
		List<Acquisition> shadowAcquisitions = new ArrayList<>(0);
		// Keys and costs first: a cost that turns out invalid must fail the request before any policy counts it.
		for (MethodPolicy policy : policies) {
			if (policy.skips(scope)) {
				continue;
			}
			Acquisition acquisition = new Acquisition(policy.policy(), policy.key(scope, this.clientIp),
					policy.cost(scope));
			(policy.shadow() ? shadows : enforced).add(policy);
			(policy.shadow() ? shadowAcquisitions : acquisitions).add(acquisition);
		}
		Admission admission = acquisitions.isEmpty() ? null : decideAll(acquisitions, false);
		List<Admission> shadowAdmissions = new ArrayList<>(shadows.size());
		for (int i = 0; i < shadows.size(); i++) {
			Admission shadow = decideAll(List.of(shadowAcquisitions.get(i)), true);
			shadowAdmissions.add(shadow);
			Decision decision = shadow.decision(0);
			if (decision != null && !decision.allowed()) {
				this.shadowReporter.rejected(shadows.get(i).policy(), decision);
			}
		}
		List<AppliedRateLimit> applied = new ArrayList<>(acquisitions.size());
		List<AppliedRateLimit> rejected = new ArrayList<>(1);
		if (admission != null) {
			for (int i = 0; i < acquisitions.size(); i++) {
				Decision decision = admission.decision(i);
				if (decision != null) {
					AppliedRateLimit limit = new AppliedRateLimit(acquisitions.get(i).policy(), decision);
					applied.add(limit);
					if (!decision.allowed()) {
						rejected.add(limit);
					}
				}
			}
		}
		applied.sort(MOST_RESTRICTIVE_FIRST);
		if (!rejected.isEmpty()) {
			// The rejection that lasts longest leads: retrying sooner would only be rejected again.
			rejected.sort(Comparator.comparingLong((AppliedRateLimit limit) -> limit.decision().retryAfterSeconds())
				.reversed());
			applied.removeAll(rejected);
			applied.addAll(0, rejected);
			publish(request, response, applied);
			AppliedRateLimit first = rejected.get(0);
			throw rejection(first.policy(), first.decision(),
					rejected.stream().map((limit) -> limit.policy().name()).toList());
		}
		publish(request, response, applied);
		Object result = null;
		Throwable failure = null;
		try {
			result = invocation.proceed();
			return result;
		}
		catch (Throwable ex) {
			failure = ex;
			throw ex;
		}
		finally {
			int status = -1;
			for (int i = 0; i < enforced.size(); i++) {
				status = refundUncounted(enforced.get(i), admission, i, invocation, result, failure, status);
			}
			for (int i = 0; i < shadows.size(); i++) {
				status = refundUncounted(shadows.get(i), shadowAdmissions.get(i), 0, invocation, result, failure,
						status);
			}
		}
	}

	private static int refundUncounted(MethodPolicy policy, @Nullable Admission admission, int index,
			MethodInvocation invocation, @Nullable Object result, @Nullable Throwable failure, int status) {
		CountOn countOn = policy.countOn();
		if (countOn == null || admission == null) {
			return status;
		}
		int outcome = (status >= 0) ? status : CountOn.statusOf(invocation.getMethod(), result, failure);
		if (!countOn.counts(outcome)) {
			admission.refund(index);
		}
		return outcome;
	}

	private static RuntimeException rejection(RateLimitPolicy policy, Decision decision, List<String> violated) {
		if (decision.origin() == Decision.Origin.FAIL_CLOSED) {
			return new RateLimitUnavailableException(policy, decision);
		}
		return new RateLimitExceededException(policy, decision, violated);
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
		try {
			Admission admission = this.rateLimiter.tryAcquireAll(acquisitions);
			for (int i = 0; i < contexts.size(); i++) {
				Decision decision = admission.decision(i);
				if (decision != null) {
					contexts.get(i).setDecision(decision);
				}
			}
			return admission;
		}
		catch (RuntimeException ex) {
			observations.forEach((observation) -> observation.error(ex));
			throw ex;
		}
		finally {
			observations.forEach(Observation::stop);
		}
	}

	private Decision decide(RateLimitPolicy policy, String key, long cost) {
		if (this.observationRegistry.isNoop()) {
			return this.rateLimiter.tryAcquire(policy, key, cost);
		}
		RateLimitObservationContext context = new RateLimitObservationContext(policy, this.storeName);
		Observation observation = Observation
			.createNotStarted(this.observationConvention, DEFAULT_CONVENTION, () -> context, this.observationRegistry)
			.start();
		try (Observation.Scope scope = observation.openScope()) {
			Decision decision = this.rateLimiter.tryAcquire(policy, key, cost);
			context.setDecision(decision);
			return decision;
		}
		catch (RuntimeException ex) {
			observation.error(ex);
			throw ex;
		}
		finally {
			observation.stop();
		}
	}

	/**
	 * Observe every decision ({@code ratelimit.decision}: a timer, and a span where tracing is on).
	 * @param observationRegistry the registry
	 * @param convention the convention, or {@code null} for the default one
	 */
	public void setObservationRegistry(ObservationRegistry observationRegistry,
			@Nullable RateLimitObservationConvention convention) {
		this.observationRegistry = observationRegistry;
		this.observationConvention = convention;
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

	private void publish(@Nullable HttpServletRequest request, @Nullable HttpServletResponse response,
			List<AppliedRateLimit> applied) {
		if (request != null) {
			request.setAttribute(RateLimitStatus.ATTRIBUTE, List.copyOf(applied));
		}
		if (response != null && !applied.isEmpty()) {
			this.headersWriter.writeHeaders(response, applied);
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
		String address = this.clientIpResolver.resolve(request);
		return (address != null && !address.isEmpty()) ? address : MethodPolicy.NO_REQUEST_KEY;
	}

}
