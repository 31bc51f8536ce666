package io.github.ratelimit.mcp;

import java.util.List;
import java.util.function.Supplier;

import io.github.ratelimit.aop.DecidedInvocations;
import io.github.ratelimit.engine.CurrentExchange;
import io.github.ratelimit.engine.RateLimitEngine;
import io.github.ratelimit.engine.RateLimitExchange;
import io.github.ratelimit.engine.RateLimitOutcome;
import io.modelcontextprotocol.server.McpServerFeatures.SyncToolSpecification;
import io.modelcontextprotocol.server.McpSyncServerExchange;
import io.modelcontextprotocol.spec.McpSchema;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.util.function.SingletonSupplier;
import org.springframework.web.ErrorResponseException;

/**
 * Limits the calls of the {@code @RateLimited} tools of a Spring AI MCP server ({@code @McpTool} and {@code @Tool}
 * methods): it wraps the server's tool specifications, the beans its auto-configuration gives the server, so that each
 * call of a limited tool is decided with the policy engine before the tool runs.
 * <p>
 * A rejected call is a tool result with {@code isError}, its text the problem's detail and its {@code _meta} the
 * policy and the seconds to wait, which the agent reads and acts on; the tool does not run. An admitted call's
 * policies that count by outcome are settled from its result (an error result or a call that threw is 500), and its
 * concurrency slots are given back when the tool returns. Keys, costs and skip conditions are SpEL over the tool's
 * arguments by name, {@code #session}, {@code #tool}, {@code #clientName}, and the HTTP request's {@code #principal}
 * and {@code #clientIp}.
 * <p>
 * A decision that waits for the store waits on the thread that runs the tool: the HTTP request's, on a synchronous
 * server.
 *
 * @since 0.5.0
 */
public final class RateLimitedMcpTools implements BeanPostProcessor, SmartInitializingSingleton {

	private final ObjectProvider<RateLimitEngine> engine;

	private final CurrentExchange currentExchange;

	private final Supplier<McpToolMethods> methods;

	/**
	 * Create the post-processor.
	 * @param engine the engine that decides, looked up on the first call (none with limits switched off)
	 * @param currentExchange the HTTP request a call comes in, or {@link CurrentExchange#NONE}
	 * @param beanFactory the factory whose beans' tools it finds, on the first call
	 */
	public RateLimitedMcpTools(ObjectProvider<RateLimitEngine> engine, CurrentExchange currentExchange,
			ConfigurableListableBeanFactory beanFactory) {
		this.engine = engine;
		this.currentExchange = currentExchange;
		this.methods = SingletonSupplier.of(() -> McpToolMethods.of(beanFactory));
	}

	/** Find the limited tools once every bean is there: two limited tools of one name fail the start-up. */
	@Override
	public void afterSingletonsInstantiated() {
		this.methods.get();
	}

	@Override
	public Object postProcessAfterInitialization(Object bean, String beanName) {
		if (bean instanceof List<?> list && !list.isEmpty()
				&& list.stream().allMatch(SyncToolSpecification.class::isInstance)) {
			return list.stream().map((spec) -> limited((SyncToolSpecification) spec)).toList();
		}
		return bean;
	}

	private SyncToolSpecification limited(SyncToolSpecification spec) {
		return new SyncToolSpecification(spec.tool(), (exchange, request) -> call(spec, exchange, request));
	}

	private McpSchema.CallToolResult call(SyncToolSpecification spec, McpSyncServerExchange exchange,
			McpSchema.CallToolRequest request) {
		McpToolMethods.@Nullable Target target = this.methods.get().find(request.name());
		RateLimitEngine engine = this.engine.getIfAvailable();
		if (target == null || engine == null) {
			return spec.callHandler().apply(exchange, request);
		}
		RateLimitExchange http = this.currentExchange.get();
		McpToolRateLimitRequest limited = new McpToolRateLimitRequest(exchange, request,
				(http != null) ? http.request() : null);
		engine.settlement().settledByStack(limited);
		RateLimitOutcome outcome = engine.decideMethod(target.method(), target.targetClass(),
				target.arguments(request, exchange), limited);
		if (outcome == null) {
			return spec.callHandler().apply(exchange, request);
		}
		ErrorResponseException rejection = outcome.rejection();
		if (rejection != null) {
			return McpToolResults.rejection(rejection);
		}
		McpSchema.CallToolResult result = null;
		Throwable failure = null;
		try {
			// Decided: the method's own proxy, if a web stack made one, lets this call through.
			result = DecidedInvocations.decided(target.method(), () -> spec.callHandler().apply(exchange, request));
			return result;
		}
		catch (RuntimeException | Error ex) {
			failure = ex;
			throw ex;
		}
		finally {
			engine.settlement().settle(outcome, limited, target.method(), result, failure);
			engine.settlement().settleRequestAsync(limited, McpToolResults.httpStatus(result));
			engine.settlement().releaseRequestAsync(limited);
		}
	}

}
