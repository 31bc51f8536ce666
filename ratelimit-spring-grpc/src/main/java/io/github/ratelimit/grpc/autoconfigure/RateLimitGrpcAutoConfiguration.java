package io.github.ratelimit.grpc.autoconfigure;

import io.github.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import io.github.ratelimit.engine.RateLimitEngine;
import io.github.ratelimit.grpc.RateLimitServerInterceptor;
import io.grpc.BindableService;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.grpc.server.GlobalServerInterceptor;

/**
 * {@link org.springframework.boot.autoconfigure.EnableAutoConfiguration Auto-configuration} of {@code @RateLimited}
 * on gRPC services (Spring gRPC on Spring Boot 4.1): the server interceptor that decides their calls, global to every
 * gRPC server of the application. With limits switched off ({@code ratelimit.enabled=false}) there is no engine, and
 * no interceptor: every call goes through.
 *
 * @since 0.5.0
 */
@AutoConfiguration(after = RateLimitAutoConfiguration.class)
@ConditionalOnClass({ BindableService.class, GlobalServerInterceptor.class, RateLimitServerInterceptor.class })
@ConditionalOnBooleanProperty(name = "spring.grpc.server.enabled", matchIfMissing = true)
@ConditionalOnBean(RateLimitEngine.class)
public final class RateLimitGrpcAutoConfiguration {

	@Bean
	@GlobalServerInterceptor
	@ConditionalOnMissingBean
	RateLimitServerInterceptor rateLimitServerInterceptor(RateLimitEngine engine,
			ObjectProvider<BindableService> services) {
		return new RateLimitServerInterceptor(engine, () -> services.orderedStream().toList());
	}

	/** A {@code @RateLimited} method that implements no gRPC method fails the start-up, naming it. */
	@Bean
	static SmartInitializingSingleton rateLimitGrpcMethodsCheck(ObjectProvider<RateLimitServerInterceptor> interceptor) {
		return () -> interceptor.ifAvailable(RateLimitServerInterceptor::hasRateLimitedMethods);
	}

}
