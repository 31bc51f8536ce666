package io.github.ratelimit.aop;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.limiter.RateLimiter;
import io.github.ratelimit.observation.DefaultRateLimitObservationConvention;
import io.github.ratelimit.observation.RateLimitObservationContext;
import io.github.ratelimit.observation.RateLimitObservationConvention;
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
 * Policies are checked in declaration order; the first rejection stops the invocation (the policies before it have
 * counted the request). The headers show the rejecting policy, or else the one with the fewest units left.
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
		// Keys and costs first: a cost that turns out invalid must fail the request before any policy counts it.
		MethodPolicy[] policies = limits.policies;
		String[] keys = new String[policies.length];
		long[] costs = new long[policies.length];
		for (int i = 0; i < policies.length; i++) {
			costs[i] = policies[i].cost(scope);
			keys[i] = policies[i].key(scope, this.clientIp);
		}
		List<AppliedRateLimit> applied = new ArrayList<>(policies.length);
		for (int i = 0; i < policies.length; i++) {
			RateLimitPolicy policy = policies[i].policy();
			Decision decision = decide(policy, keys[i], costs[i]);
			if (!decision.allowed()) {
				applied.sort(MOST_RESTRICTIVE_FIRST);
				applied.add(0, new AppliedRateLimit(policy, decision));
				publish(request, response, applied);
				if (decision.origin() == Decision.Origin.FAIL_CLOSED) {
					throw new RateLimitUnavailableException(policy, decision);
				}
				throw new RateLimitExceededException(policy, decision);
			}
			applied.add(new AppliedRateLimit(policy, decision));
		}
		applied.sort(MOST_RESTRICTIVE_FIRST);
		publish(request, response, applied);
		return invocation.proceed();
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
