package io.github.ratelimit.engine;

import java.util.function.Function;

import io.github.ratelimit.web.RateLimitRequest;
import org.jspecify.annotations.Nullable;

import org.springframework.expression.BeanResolver;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.spel.support.StandardEvaluationContext;

/**
 * One request of one layer as keys, costs and skip conditions see it: the method's arguments (none for the filter
 * layer), the request, and the SpEL evaluation context, built on first use and shared by every policy of the layer.
 */
final class RequestScope {

	static final Object[] NO_ARGUMENTS = new Object[0];

	static final String[] NO_NAMES = new String[0];

	private final Object[] arguments;

	private final @Nullable RateLimitRequest request;

	private final String[] parameterNames;

	private final BeanResolver beanResolver;

	private final Function<RateLimitRequest, String> clientIpResolver;

	private @Nullable EvaluationContext evaluationContext;

	private @Nullable String clientIp;

	RequestScope(Object[] arguments, String[] parameterNames, @Nullable RateLimitRequest request,
			BeanResolver beanResolver, Function<RateLimitRequest, String> clientIpResolver) {
		this.arguments = arguments;
		this.request = request;
		this.parameterNames = parameterNames;
		this.beanResolver = beanResolver;
		this.clientIpResolver = clientIpResolver;
	}

	/** The scope of the filter layer: a request, no method. */
	static RequestScope ofRequest(RateLimitRequest request, BeanResolver beanResolver,
			Function<RateLimitRequest, String> clientIpResolver) {
		return new RequestScope(NO_ARGUMENTS, NO_NAMES, request, beanResolver, clientIpResolver);
	}

	/** The client's address, resolved once, on first use; a fixed key outside of an HTTP request. */
	String clientIp() {
		String clientIp = this.clientIp;
		if (clientIp == null) {
			clientIp = (this.request != null) ? this.clientIpResolver.apply(this.request) : PolicySpec.NO_REQUEST_KEY;
			this.clientIp = clientIp;
		}
		return clientIp;
	}

	Object[] arguments() {
		return this.arguments;
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
			RateLimitRequest request = this.request;
			created.setVariable("request", (request != null) ? request.getNativeRequest() : null);
			created.setVariable("principal", (request != null) ? request.getUserPrincipal() : null);
			created.setVariable("clientIp", new ClientAddress(clientIp()));
			Object exchange = (request != null) ? request.getNativeExchange() : null;
			if (exchange != null && created.lookupVariable("exchange") == null) {
				created.setVariable("exchange", exchange);
			}
			if (request != null) {
				// Over a parameter of the same name, which a client fills: still #p<i> to expressions.
				request.getExpressionVariables().forEach(created::setVariable);
			}
			this.evaluationContext = created;
			context = created;
		}
		return context;
	}

}
