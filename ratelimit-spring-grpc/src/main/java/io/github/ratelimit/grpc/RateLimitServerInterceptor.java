package io.github.ratelimit.grpc;

import java.util.List;
import java.util.function.Supplier;

import io.github.ratelimit.engine.RateLimitEngine;
import io.grpc.BindableService;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import org.jspecify.annotations.Nullable;

import org.springframework.core.Ordered;
import org.springframework.util.function.SingletonSupplier;

/**
 * Decides the calls of {@code @RateLimited} methods of gRPC services with the policy engine, as each call starts: with
 * the request message where the client sends one (unary and server-streaming methods), else before the service sees
 * the call. Keys, costs and skip conditions are SpEL over the message ({@code #request}, or the parameter's name),
 * the metadata's text entries ({@code #metadata['x-api-key']}), the authenticated user ({@code #principal}) and the
 * client's address ({@code #clientIp}, behind trusted proxies as on HTTP).
 * <p>
 * A rejected call is closed with {@code RESOURCE_EXHAUSTED} and a {@code google.rpc.RetryInfo} (a store that failed
 * under {@code deny}: {@code UNAVAILABLE}); every call of a limited method gets the rate-limit fields as response
 * headers. Policies that count by outcome are settled from the call's final status, mapped to the HTTP status
 * {@code count-on} lists (as Google's APIs map them: {@code INVALID_ARGUMENT} is 400, {@code UNAVAILABLE} 503).
 * <p>
 * A decision that waits for the store waits on the call's thread: gRPC's executor, not a transport thread, unless the
 * server runs calls on the transport ({@code directExecutor}).
 *
 * @since 0.5.0
 */
public final class RateLimitServerInterceptor implements ServerInterceptor, Ordered {

	/**
	 * Inside Spring gRPC's exception handler and security interceptors (orders below 100), so that keys may name the
	 * user and what a service throws is still answered by the application's handlers.
	 */
	public static final int DEFAULT_ORDER = 100;

	private final RateLimitEngine engine;

	private final Supplier<GrpcServiceMethods> methods;

	/**
	 * Create an interceptor.
	 * @param engine the engine that decides
	 * @param services the application's gRPC services, whose rate limited methods it finds on first use
	 */
	public RateLimitServerInterceptor(RateLimitEngine engine, Supplier<List<BindableService>> services) {
		this.engine = engine;
		this.methods = SingletonSupplier.of(() -> GrpcServiceMethods.of(services.get()));
	}

	/**
	 * Find the services' rate limited methods now, so that a {@code @RateLimited} method that implements no gRPC
	 * method fails the start-up rather than the first call.
	 * @return whether any method is rate limited
	 */
	public boolean hasRateLimitedMethods() {
		return !this.methods.get().isEmpty();
	}

	@Override
	public int getOrder() {
		return DEFAULT_ORDER;
	}

	@Override
	public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(ServerCall<ReqT, RespT> call, Metadata headers,
			ServerCallHandler<ReqT, RespT> next) {
		GrpcServiceMethods.@Nullable Target target = this.methods.get()
			.find(call.getMethodDescriptor().getFullMethodName());
		if (target == null) {
			return next.startCall(call, headers);
		}
		GrpcRateLimitRequest request = new GrpcRateLimitRequest(call, headers, SecurityPrincipal.current());
		return new RateLimitedServerCall<>(this.engine, target, call, headers, request, next).start();
	}

}
