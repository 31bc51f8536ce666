package io.github.ratelimit.grpc;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import io.grpc.ClientInterceptors;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.MetadataUtils;
import org.junit.jupiter.api.Test;

import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/** Behind a trusted proxy, a call is keyed by the client the proxy names, as on HTTP. */
class TrustedProxiesOnGrpcTests {

	@Test
	void behindATrustedProxyEachClientItNamesHasItsOwnQuota() throws InterruptedException {
		try (ConfigurableApplicationContext app = GreeterApplication
			.run("--ratelimit.client-ip.trusted-proxies=127.0.0.1/32")) {
			ManagedChannel channel = GreeterApplication.channel(app);
			try {
				assertThat(collectFrom(channel, "198.51.100.1").get()).isEqualTo("Hello a");
				assertThat(collectFrom(channel, "198.51.100.2").get()).isEqualTo("Hello a");
				assertThat(collectFrom(channel, "198.51.100.1").get()).isInstanceOfSatisfying(
						StatusRuntimeException.class, (refused) -> assertThat(refused.getStatus().getCode())
							.isEqualTo(Status.Code.RESOURCE_EXHAUSTED));
			}
			finally {
				channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
			}
		}
	}

	private static AtomicReference<Object> collectFrom(ManagedChannel channel, String client)
			throws InterruptedException {
		Metadata forwarded = new Metadata();
		forwarded.put(RateLimitedGrpcCallsTests.FORWARDED_FOR, client);
		return RateLimitedGrpcCallsTests.collect(
				ClientInterceptors.intercept(channel, MetadataUtils.newAttachHeadersInterceptor(forwarded)), "a");
	}

}
