package io.github.ratelimit.grpc;

import java.util.concurrent.TimeUnit;

import com.google.rpc.RetryInfo;
import io.github.ratelimit.grpc.test.GreeterGrpc;
import io.github.ratelimit.grpc.test.HelloRequest;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import org.junit.jupiter.api.Test;

import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * A store that fails under {@code failure-mode: deny}: the call is refused as unavailable, not as over a limit, and
 * told when to come back.
 */
class StoreOutageOnGrpcTests {

	@Test
	void aStoreOutageUnderDenyIsAnsweredUnavailable() throws InterruptedException {
		// Port 1: nothing listens there, so every call to Redis fails at once.
		try (ConfigurableApplicationContext app = GreeterApplication.run("--ratelimit.store=redis",
				"--spring.data.redis.host=127.0.0.1", "--spring.data.redis.port=1", "--ratelimit.failure-mode=deny")) {
			ManagedChannel channel = GreeterApplication.channel(app);
			try {
				assertThatExceptionOfType(StatusRuntimeException.class)
					.isThrownBy(() -> GreeterGrpc.newBlockingStub(channel)
						.sayHello(HelloRequest.newBuilder().setName("ada").build()))
					.satisfies((ex) -> {
						org.assertj.core.api.Assertions.assertThat(ex.getStatus().getCode())
							.isEqualTo(Status.Code.UNAVAILABLE);
						org.assertj.core.api.Assertions.assertThat(StatusProto.fromThrowable(ex).getDetailsList())
							.as("when to come back")
							.anyMatch((detail) -> detail.is(RetryInfo.class));
					});
			}
			finally {
				channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
			}
		}
	}

}
