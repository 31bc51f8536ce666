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

	InvocationScope(Object[] arguments, @Nullable HttpServletRequest request, String[] parameterNames,
			BeanResolver beanResolver) {
		this.arguments = arguments;
		this.request = request;
		this.parameterNames = parameterNames;
		this.beanResolver = beanResolver;
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
			this.evaluationContext = created;
			context = created;
		}
		return context;
	}

}
