package io.github.ratelimit.grpc;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.concurrent.TimeUnit;

import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.grpc.test.GreeterGrpc;
import io.github.ratelimit.grpc.test.HelloReply;
import io.github.ratelimit.grpc.test.HelloRequest;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.grpc.server.GlobalServerInterceptor;
import org.springframework.grpc.server.security.AuthenticationProcessInterceptor;
import org.springframework.grpc.server.security.HttpBasicAuthenticationExtractor;
import org.springframework.security.authentication.ProviderManager;
import org.springframework.security.authentication.dao.DaoAuthenticationProvider;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * Calls authenticated by Spring gRPC's own security interceptor: a limit keyed by {@code #principal} counts per user,
 * whatever the message says.
 */
class AuthenticatedCallsTests {

	@Test
	void aLimitKeyedByThePrincipalCountsPerAuthenticatedUser() throws InterruptedException {
		try (ConfigurableApplicationContext app = GreeterApplication.run(SecuredGreeterApplication.class)) {
			ManagedChannel channel = GreeterApplication.channel(app);
			try {
				GreeterGrpc.GreeterBlockingStub ada = as(channel, "ada");
				for (int i = 0; i < 2; i++) {
					assertThat(ada.sayHello(hello("name-" + i)).getMessage()).isEqualTo("Hello ada");
				}
				StatusRuntimeException refused = catchThrowableOfType(StatusRuntimeException.class,
						() -> ada.sayHello(hello("another-name")));
				assertThat(refused.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
				assertThat(as(channel, "grace").sayHello(hello("name-0")).getMessage()).isEqualTo("Hello grace");
			}
			finally {
				channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
			}
		}
	}

	private static GreeterGrpc.GreeterBlockingStub as(ManagedChannel channel, String user) {
		Metadata headers = new Metadata();
		headers.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Basic "
				+ Base64.getEncoder().encodeToString((user + ":secret").getBytes(StandardCharsets.UTF_8)));
		return GreeterGrpc.newBlockingStub(channel).withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers));
	}

	private static HelloRequest hello(String name) {
		return HelloRequest.newBuilder().setName(name).build();
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(UserGreeter.class)
	static class SecuredGreeterApplication {

		/** Spring gRPC's own interceptor, authenticating every call with HTTP Basic. */
		@Bean
		@GlobalServerInterceptor
		AuthenticationProcessInterceptor authentication() {
			DaoAuthenticationProvider provider = new DaoAuthenticationProvider(new InMemoryUserDetailsManager(
					User.withUsername("ada").password("{noop}secret").roles("USER").build(),
					User.withUsername("grace").password("{noop}secret").roles("USER").build()));
			return new AuthenticationProcessInterceptor(new ProviderManager(provider),
					new HttpBasicAuthenticationExtractor(), null);
		}

	}

	static class UserGreeter extends GreeterGrpc.GreeterImplBase {

		@Override
		@RateLimited(name = "user-hellos", limit = 2, window = "1h", key = "#principal.name")
		public void sayHello(HelloRequest request, StreamObserver<HelloReply> responseObserver) {
			String user = org.springframework.security.core.context.SecurityContextHolder.getContext()
				.getAuthentication()
				.getName();
			responseObserver.onNext(HelloReply.newBuilder().setMessage("Hello " + user).build());
			responseObserver.onCompleted();
		}

	}

}
