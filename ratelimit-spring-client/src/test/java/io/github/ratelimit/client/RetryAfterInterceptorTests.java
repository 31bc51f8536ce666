package io.github.ratelimit.client;

import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
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
	void everyHttpDateFormARecipientMustAcceptIsWaitedUntil() throws Exception {
		Clock clock = Clock.fixed(Instant.parse("1994-11-06T08:49:30Z"), ZoneOffset.UTC);
		// RFC 9110, section 5.6.7: IMF-fixdate, then the obsolete RFC 850 and asctime forms, all 7 seconds away.
		for (String date : List.of("Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT",
				"Sun Nov  6 08:49:37 1994")) {
			this.waits.clear();
			RetryAfterInterceptor interceptor = retryingOnceWithoutJitterAt(clock);
			interceptor.intercept(request(HttpMethod.GET), new byte[0], answering(new AtomicInteger(), date));
			assertThat(this.waits).as(date).containsExactly(Duration.ofSeconds(7));
		}
	}

	@Test
	void aTwoDigitYearIsTheCenturyThatPutsItNoMoreThan50YearsAhead() throws Exception {
		Clock clock = Clock.fixed(Instant.parse("2026-12-02T01:00:00Z"), ZoneOffset.UTC);
		RetryAfterInterceptor interceptor = retryingOnceWithoutJitterAt(clock);
		interceptor.intercept(request(HttpMethod.GET), new byte[0],
				answering(new AtomicInteger(), "Wednesday, 02-Dec-26 01:00:07 GMT"));
		// 1994, long past: retry at once (rather than in 2094, which the budget would refuse).
		interceptor.intercept(request(HttpMethod.GET), new byte[0],
				answering(new AtomicInteger(), "Sunday, 06-Nov-94 08:49:37 GMT"));
		assertThat(this.waits).containsExactly(Duration.ofSeconds(7), Duration.ZERO);
	}

	@Test
	void aServiceUnavailableAnswerIsRetriedAsATooManyRequestsOneIs() throws Exception {
		AtomicInteger calls = new AtomicInteger();
		ClientHttpRequestExecution unavailableThenFine = (request, body) -> {
			if (calls.incrementAndGet() == 1) {
				MockClientHttpResponse unavailable = new MockClientHttpResponse(new byte[0],
						HttpStatus.SERVICE_UNAVAILABLE);
				unavailable.getHeaders().set("Retry-After", "2");
				return unavailable;
			}
			return new MockClientHttpResponse(new byte[0], HttpStatus.OK);
		};
		RetryAfterInterceptor interceptor = RetryAfterInterceptor.builder()
			.maxJitter(Duration.ZERO)
			.sleeper(this.waits::add)
			.build();
		ClientHttpResponse response = interceptor.intercept(request(HttpMethod.GET), new byte[0], unavailableThenFine);
		assertThat(response.getStatusCode().value()).isEqualTo(200);
		assertThat(calls).hasValue(2);
		assertThat(this.waits).containsExactly(Duration.ofSeconds(2));
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

	/** One retry, no jitter, HTTP-dates counted from the clock, waits recorded in {@link #waits}. */
	private RetryAfterInterceptor retryingOnceWithoutJitterAt(Clock clock) {
		return RetryAfterInterceptor.builder()
			.maxAttempts(2)
			.maxJitter(Duration.ZERO)
			.clock(clock)
			.sleeper(this.waits::add)
			.build();
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
