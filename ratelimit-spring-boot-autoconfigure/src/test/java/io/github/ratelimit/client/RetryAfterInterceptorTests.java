package io.github.ratelimit.client;

import java.net.URI;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.client.ClientHttpRequestExecution;
import org.springframework.http.client.ClientHttpResponse;
import org.springframework.mock.http.client.MockClientHttpRequest;
import org.springframework.mock.http.client.MockClientHttpResponse;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the interceptor does with each kind of answer (the sample app's tests run it against a real server).
 */
class RetryAfterInterceptorTests {

	private final List<Duration> waits = new ArrayList<>();

	@Test
	void nonIdempotentMethodsAreNotRetriedUnlessAsked() throws Exception {
		AtomicInteger calls = new AtomicInteger();
		ClientHttpRequestExecution rejecting = answering(calls, "1");
		RetryAfterInterceptor interceptor = RetryAfterInterceptor.builder().sleeper(this.waits::add).build();
		ClientHttpResponse response = interceptor.intercept(request(HttpMethod.POST), new byte[0], rejecting);
		assertThat(response.getStatusCode().value()).isEqualTo(429);
		assertThat(calls).hasValue(1);
		RetryAfterInterceptor retrying = RetryAfterInterceptor.builder()
			.retryNonIdempotent(true)
			.sleeper(this.waits::add)
			.build();
		retrying.intercept(request(HttpMethod.POST), new byte[0], rejecting);
		assertThat(calls).hasValue(1 + 3);
	}

	@Test
	void anHttpDateRetryAfterIsWaitedUntil() throws Exception {
		String in10s = ZonedDateTime.now(ZoneOffset.UTC).plusSeconds(10).format(DateTimeFormatter.RFC_1123_DATE_TIME);
		RetryAfterInterceptor interceptor = RetryAfterInterceptor.builder()
			.maxAttempts(2)
			.maxJitter(Duration.ZERO)
			.sleeper(this.waits::add)
			.build();
		interceptor.intercept(request(HttpMethod.GET), new byte[0], answering(new AtomicInteger(), in10s));
		assertThat(this.waits).singleElement()
			.satisfies((wait) -> assertThat(wait).isBetween(Duration.ofSeconds(8), Duration.ofSeconds(10)));
	}

	@Test
	void withoutRetryAfterTheBackoffIsExponentialWithFullJitter() throws Exception {
		RetryAfterInterceptor interceptor = RetryAfterInterceptor.builder()
			.maxAttempts(5)
			.backoff(Duration.ofMillis(100), Duration.ofMillis(300))
			.sleeper(this.waits::add)
			.build();
		interceptor.intercept(request(HttpMethod.GET), new byte[0], answering(new AtomicInteger(), null));
		assertThat(this.waits).hasSize(4);
		long[] bounds = { 100, 200, 300, 300 };
		for (int i = 0; i < 4; i++) {
			assertThat(this.waits.get(i).toMillis()).isBetween(0L, bounds[i]);
		}
	}

	@Test
	void aGarbledRetryAfterIsTreatedAsMissing() throws Exception {
		RetryAfterInterceptor interceptor = RetryAfterInterceptor.builder()
			.maxAttempts(2)
			.backoff(Duration.ofMillis(50), Duration.ofMillis(50))
			.sleeper(this.waits::add)
			.build();
		interceptor.intercept(request(HttpMethod.GET), new byte[0], answering(new AtomicInteger(), "soon, maybe"));
		assertThat(this.waits).singleElement()
			.satisfies((wait) -> assertThat(wait.toMillis()).isBetween(0L, 50L));
	}

	private static MockClientHttpRequest request(HttpMethod method) {
		return new MockClientHttpRequest(method, URI.create("http://127.0.0.1/limited"));
	}

	private static ClientHttpRequestExecution answering(AtomicInteger calls, String retryAfter) {
		return (request, body) -> {
			calls.incrementAndGet();
			MockClientHttpResponse response = new MockClientHttpResponse(new byte[0], HttpStatus.TOO_MANY_REQUESTS);
			if (retryAfter != null) {
				response.getHeaders().set("Retry-After", retryAfter);
			}
			return response;
		};
	}

}
