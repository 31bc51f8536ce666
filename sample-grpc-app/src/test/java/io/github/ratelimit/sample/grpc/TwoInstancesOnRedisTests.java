package io.github.ratelimit.sample.grpc;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import io.github.ratelimit.sample.grpc.quotes.QuoteRequest;
import io.github.ratelimit.sample.grpc.quotes.QuotesGrpc;
import io.github.ratelimit.test.RedisServer;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two instances of the sample on one Redis, as a fleet runs it: concurrent calls spread over both admit exactly the
 * policy's limit for a client, and every other call is {@code RESOURCE_EXHAUSTED}.
 */
class TwoInstancesOnRedisTests {

	@Test
	void concurrentCallsSpreadOverTwoInstancesAdmitExactlyTheLimit() throws Exception {
		String prefix = "--ratelimit.redis.key-prefix=grpc-" + System.nanoTime();
		try (RedisServer redis = RedisServer.start();
				SampleGrpcServer first = start(redis, prefix);
				SampleGrpcServer second = start(redis, prefix)) {
			ExecutorService clients = Executors.newFixedThreadPool(8);
			try {
				List<Future<Status.Code>> calls = new ArrayList<>();
				for (int i = 0; i < 60; i++) {
					SampleGrpcServer server = (i % 2 == 0) ? first : second;
					calls.add(clients.submit(() -> quote(server)));
				}
				int admitted = 0;
				for (Future<Status.Code> call : calls) {
					Status.Code code = call.get();
					if (code == Status.Code.OK) {
						admitted++;
					}
					else {
						assertThat(code).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
					}
				}
				assertThat(admitted).isEqualTo(25);
			}
			finally {
				clients.shutdownNow();
			}
		}
	}

	private static Status.Code quote(SampleGrpcServer server) {
		try {
			QuotesGrpc.newBlockingStub(server.channel).getQuote(QuoteRequest.newBuilder().setSymbol("ACME").build());
			return Status.Code.OK;
		}
		catch (StatusRuntimeException ex) {
			return ex.getStatus().getCode();
		}
	}

	private static SampleGrpcServer start(RedisServer redis, String prefix) {
		return SampleGrpcServer.start("--spring.profiles.active=redis", "--spring.data.redis.host=" + redis.host(),
				"--spring.data.redis.port=" + redis.port(), prefix, "--ratelimit.policies.quotes.limit=25",
				"--ratelimit.policies.quotes.window=1h");
	}

}
