package io.github.ratelimit.aop;

import io.github.ratelimit.limiter.RateLimiter;
import io.github.ratelimit.observation.RateLimitObservationConvention;
import io.github.ratelimit.web.ClientIpResolver;
import io.github.ratelimit.web.ClientExemptions;
import io.github.ratelimit.web.RateLimitHeadersWriter;
import io.github.ratelimit.web.RateLimitPlanResolver;
import io.micrometer.observation.ObservationRegistry;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;

import org.springframework.aop.support.AopUtils;
import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;

/**
 * Rate limits an invocation: looks its policies up and has them decided, then proceeds or throws. It holds no
 * algorithm, store or HTTP status logic.
 * <p>
 * A request passes only if every enforced policy admits it, and one rejected by any of them takes nothing from any
 * of them (see {@link RateLimiter#tryAcquireAll}); what the filter layer took before stays taken. Policies that count
 * by outcome give their unit back when the status the client gets does not count (settled by {@link RateLimitFilter}
 * at the end of the request); shadow policies count and report but never reject. The headers show the rejecting
 * policy, or else the one with the fewest units left.
 *
 * @since 0.1.0
 */
public final class RateLimitInterceptor implements MethodInterceptor {

	private final RateLimitedMethodRegistry registry;

	private final PolicyEnforcer enforcer;

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
		this.enforcer = new PolicyEnforcer(registry, rateLimiter, headersWriter, clientIpResolver);
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
		scope.setClientIpSupplier(this.enforcer.clientIp());
		if (limits.single && !this.enforcer.hasExemptions()) {
			this.enforcer.admitOne(limits.policies[0], scope, request, response);
			return invocation.proceed();
		}
		PolicyEnforcer.Held held = this.enforcer.admit(limits.policies, scope, request, response);
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
			// Settled by the filter from the status the client gets; without it (no HTTP request, or a chain
			// without the filter), from what the method returned or threw.
			if (!Settlements.defer(request, held)) {
				Object outcome = result;
				Throwable thrown = failure;
				held.settle(() -> CountOn.statusOf(invocation.getMethod(), outcome, thrown));
			}
		}
	}

	/**
	 * Observe every decision ({@code ratelimit.decision}: a timer, and a span where tracing is on).
	 * @param observationRegistry the registry
	 * @param convention the convention, or {@code null} for the default one
	 */
	public void setObservationRegistry(ObservationRegistry observationRegistry,
			@Nullable RateLimitObservationConvention convention) {
		this.enforcer.setObservationRegistry(observationRegistry, convention);
	}

	/**
	 * Choose each request's plan with this resolver (see {@code ratelimit.plans}).
	 * @param planResolver the resolver, or {@code null} for the default plan always
	 * @since 0.2.0
	 */
	public void setPlanResolver(@Nullable RateLimitPlanResolver planResolver) {
		this.enforcer.setPlanResolver(planResolver);
	}

	/**
	 * Say whether the filter layer runs before the methods: then a shared policy it drew is not drawn again by a
	 * method.
	 * @param afterFilterLayer whether a filter layer with filters runs
	 * @since 0.2.0
	 */
	public void setAfterFilterLayer(boolean afterFilterLayer) {
		this.enforcer.setAfterFilterLayer(afterFilterLayer);
	}

	/**
	 * Exempt clients in these networks from every policy keyed by the client IP.
	 * @param exempt the networks
	 * @since 0.2.0
	 */
	public void setExempt(ClientExemptions exempt) {
		this.enforcer.setExempt(exempt);
	}

}
