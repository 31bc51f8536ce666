package io.github.ratelimit.aop;

import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

import org.springframework.expression.BeanResolver;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.spel.support.StandardEvaluationContext;

/**
 * One invocation of a rate limited method, as keys and costs see it: its arguments, the current request, and the
 * SpEL evaluation context, built on first use and shared by every policy of the method.
 */
final class InvocationScope {

	private final Object[] arguments;

	private final @Nullable HttpServletRequest request;

	private final String[] parameterNames;

	private final BeanResolver beanResolver;

	private @Nullable EvaluationContext evaluationContext;

	private MethodPolicy.@Nullable ClientIpSupplier clientIpSupplier;

	private @Nullable String clientIp;

	InvocationScope(Object[] arguments, @Nullable HttpServletRequest request, String[] parameterNames,
			BeanResolver beanResolver) {
		this.arguments = arguments;
		this.request = request;
		this.parameterNames = parameterNames;
		this.beanResolver = beanResolver;
	}

	/**
	 * Set where the client's address comes from: resolved once per invocation, on first use (the default key, the
	 * fallback key, {@code #clientIp} in expressions).
	 */
	void setClientIpSupplier(MethodPolicy.ClientIpSupplier supplier) {
		this.clientIpSupplier = supplier;
	}

	/** The client's address, resolved on first use. */
	String clientIp() {
		String clientIp = this.clientIp;
		if (clientIp == null) {
			MethodPolicy.ClientIpSupplier supplier = this.clientIpSupplier;
			clientIp = (supplier != null) ? supplier.get(this) : MethodPolicy.NO_REQUEST_KEY;
			this.clientIp = clientIp;
		}
		return clientIp;
	}

	Object[] arguments() {
		return this.arguments;
	}

	@Nullable HttpServletRequest request() {
		return this.request;
	}

	EvaluationContext evaluationContext() {
		EvaluationContext context = this.evaluationContext;
		if (context == null) {
			StandardEvaluationContext created = new StandardEvaluationContext();
			created.setBeanResolver(this.beanResolver);
			for (int i = 0; i < this.arguments.length; i++) {
				created.setVariable("p" + i, this.arguments[i]);
				if (i < this.parameterNames.length && this.parameterNames[i] != null) {
					created.setVariable(this.parameterNames[i], this.arguments[i]);
				}
			}
			created.setVariable("request", this.request);
			created.setVariable("principal", (this.request != null) ? this.request.getUserPrincipal() : null);
			created.setVariable("clientIp", (this.clientIpSupplier != null) ? new ClientAddress(clientIp()) : null);
			this.evaluationContext = created;
			context = created;
		}
		return context;
	}

}
