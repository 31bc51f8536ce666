package io.github.ratelimit.grpc;

import java.util.List;

import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import io.github.ratelimit.engine.InvalidRateLimitPolicyException;
import io.github.ratelimit.engine.RateLimitEngine;
import io.github.ratelimit.grpc.autoconfigure.RateLimitGrpcAutoConfiguration;
import io.github.ratelimit.grpc.test.GreeterGrpc;
import io.github.ratelimit.grpc.test.HelloReply;
import io.github.ratelimit.grpc.test.HelloRequest;
import io.grpc.BindableService;
import io.grpc.stub.StreamObserver;
import org.junit.jupiter.api.Test;

import org.springframework.aop.support.AopUtils;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The gRPC interceptor: there in any application with a gRPC server and the engine (a web one or not), gone with
 * limits switched off, with the gRPC server off or without gRPC, backing off for the application's own; and a
 * {@code @RateLimited} method that limits no call fails the start-up.
 */
class RateLimitGrpcAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(
				AutoConfigurations.of(RateLimitAutoConfiguration.class, RateLimitGrpcAutoConfiguration.class))
		.withPropertyValues("ratelimit.store=memory");

	@Test
	void anApplicationThatIsNotAWebOneHasTheEngineAndTheInterceptor() {
		this.runner.withUserConfiguration(Limited.class)
			.run((context) -> assertThat(context).hasSingleBean(RateLimitEngine.class)
				.hasSingleBean(RateLimitServerInterceptor.class));
	}

	/** In a web application, the web stack's proxies leave gRPC services alone: WebFlux would want Monos of them. */
	@Test
	void inAWebFluxApplicationTheGrpcServiceIsNotProxiedAndItsCallsAreStillDecided() {
		new ReactiveWebApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class,
					RateLimitGrpcAutoConfiguration.class))
			.withPropertyValues("ratelimit.store=memory")
			.withUserConfiguration(Limited.class)
			.run((context) -> {
				assertThat(context).hasNotFailed().hasSingleBean(RateLimitServerInterceptor.class);
				assertThat(AopUtils.isAopProxy(context.getBean(GreeterApplication.GreeterService.class))).isFalse();
				assertThat(context.getBean(RateLimitServerInterceptor.class).hasRateLimitedMethods()).isTrue();
			});
	}

	@Test
	void withLimitsSwitchedOffThereIsNoInterceptor() {
		this.runner.withUserConfiguration(Limited.class)
			.withPropertyValues("ratelimit.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(RateLimitServerInterceptor.class));
	}

	@Test
	void withTheGrpcServerSwitchedOffThereIsNoInterceptor() {
		this.runner.withPropertyValues("spring.grpc.server.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(RateLimitServerInterceptor.class));
	}

	@Test
	void withoutGrpcThereIsNoInterceptor() {
		this.runner.withClassLoader(new FilteredClassLoader(BindableService.class))
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(RateLimitEngine.class)
				.doesNotHaveBean(RateLimitServerInterceptor.class));
	}

	@Test
	void theApplicationsOwnInterceptorIsKept() {
		this.runner.withUserConfiguration(OwnInterceptor.class)
			.run((context) -> assertThat(context).hasSingleBean(RateLimitServerInterceptor.class)
				.hasBean("ownInterceptor"));
	}

	@Test
	void aRateLimitedMethodThatImplementsNoGrpcMethodFailsTheStartUpNamingIt() {
		this.runner.withUserConfiguration(MisplacedLimit.class)
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.isInstanceOf(InvalidRateLimitPolicyException.class)
				.hasMessageContaining("MisplacedLimitService#greet")
				.hasMessageContaining("limits nothing"));
	}

	@Configuration(proxyBeanMethods = false)
	@Import(GreeterApplication.GreeterService.class)
	static class Limited {

	}

	@Configuration(proxyBeanMethods = false)
	static class OwnInterceptor {

		@Bean
		RateLimitServerInterceptor ownInterceptor(RateLimitEngine engine) {
			return new RateLimitServerInterceptor(engine, List::of);
		}

	}

	@Test
	void aCostSettledAfterTheResponseFailsTheStartUpNamingIt() {
		this.runner.withUserConfiguration(SettledCost.class)
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.isInstanceOf(InvalidRateLimitPolicyException.class)
				.hasMessageContaining("SettledCostService#sayHello")
				.hasMessageContaining("'settle'"));
	}

	@Configuration(proxyBeanMethods = false)
	@Import(MisplacedLimitService.class)
	static class MisplacedLimit {

	}

	@Configuration(proxyBeanMethods = false)
	@Import(SettledCostService.class)
	static class SettledCost {

	}

	static class SettledCostService extends GreeterGrpc.GreeterImplBase {

		@Override
		@RateLimited(name = "settled", limit = 100, window = "1m", algorithm = io.github.ratelimit.Algorithm.TOKEN_BUCKET,
				settle = "#reported")
		public void sayHello(HelloRequest request, StreamObserver<HelloReply> responseObserver) {
			responseObserver.onCompleted();
		}

	}

	static class MisplacedLimitService extends GreeterGrpc.GreeterImplBase {

		@Override
		public void sayHello(HelloRequest request, StreamObserver<HelloReply> responseObserver) {
			responseObserver.onNext(greet(request));
			responseObserver.onCompleted();
		}

		/** A helper the call reaches from within: the limit would never apply. */
		@RateLimited(name = "greetings", limit = 5, window = "1m")
		public HelloReply greet(HelloRequest request) {
			return HelloReply.newBuilder().setMessage("Hello " + request.getName()).build();
		}

	}

}
