package io.github.ratelimit.client;

import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoField;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

import org.jspecify.annotations.Nullable;

import org.springframework.core.retry.RetryException;
import org.springframework.core.retry.RetryPolicy;
import org.springframework.core.retry.RetryTemplate;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpRequest;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.client.ClientHttpRequestExecution;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.http.client.ClientHttpResponse;
import org.springframework.util.backoff.BackOffExecution;

/**
 * A {@link ClientHttpRequestInterceptor} for {@code RestClient} and {@code RestTemplate} that retries a request
 * answered {@code 429 Too Many Requests} or {@code 503 Service Unavailable}, as the rate limited server asks: it waits
 * {@code Retry-After} (delay seconds or an HTTP-date) plus a random jitter, so that rejected clients do not all come
 * back at the same instant; without {@code Retry-After}, an exponential backoff with full jitter. It gives up (and
 * returns the last response) after {@link Builder#maxAttempts} attempts, or when waiting again would exceed
 * {@link Builder#maxTotalWait}. Only idempotent methods are retried unless told otherwise.
 * <p>
 * The attempts run on Spring Framework's {@link RetryTemplate}; the waits come from the responses.
 * <pre class="code">
 * RestClient client = restClientBuilder // Boot's RestClient.Builder bean
 *     .requestInterceptor(RetryAfterInterceptor.builder().maxAttempts(4).build())
 *     .build();
 * </pre>
 * The bounds hold only if the client below retries nothing by itself: Apache HttpClient 5 retries {@code 429} and
 * {@code 503} sleeping whatever {@code Retry-After} says, unless built as Boot builds it with the starter (see
 * {@link RetryAfterHttpClientAutoConfiguration}).
 *
 * @since 0.1.0
 */
public final class RetryAfterInterceptor implements ClientHttpRequestInterceptor {

	/** The obsolete asctime form of an HTTP-date, in UTC. */
	private static final DateTimeFormatter ASCTIME_DATE = DateTimeFormatter.ofPattern("EEE MMM ppd HH:mm:ss yyyy",
			Locale.US).withZone(ZoneOffset.UTC);

	private static final Set<HttpMethod> IDEMPOTENT = Set.of(HttpMethod.GET, HttpMethod.HEAD, HttpMethod.OPTIONS,
			HttpMethod.TRACE, HttpMethod.PUT, HttpMethod.DELETE);

	private final int maxAttempts;

	private final Duration maxTotalWait;

	private final Duration maxJitter;

	private final Duration initialBackoff;

	private final Duration maxBackoff;

	private final boolean retryNonIdempotent;

	private final Sleeper sleeper;

	private final Clock clock;

	private RetryAfterInterceptor(Builder builder) {
		this.maxAttempts = builder.maxAttempts;
		this.maxTotalWait = builder.maxTotalWait;
		this.maxJitter = builder.maxJitter;
		this.initialBackoff = builder.initialBackoff;
		this.maxBackoff = builder.maxBackoff;
		this.retryNonIdempotent = builder.retryNonIdempotent;
		this.sleeper = builder.sleeper;
		this.clock = builder.clock;
	}

	/**
	 * Start building an interceptor: by default 3 attempts, at most 30s of waiting in all, up to 1s of jitter,
	 * a backoff from 500ms to 10s, idempotent methods only.
	 * @return a builder
	 */
	public static Builder builder() {
		return new Builder();
	}

	@Override
	public ClientHttpResponse intercept(HttpRequest request, byte[] body, ClientHttpRequestExecution execution)
			throws IOException {
		if (!this.retryNonIdempotent && !IDEMPOTENT.contains(request.getMethod())) {
			return execution.execute(request, body);
		}
		Waits waits = new Waits();
		RetryTemplate template = new RetryTemplate(RetryPolicy.builder()
			.predicate(RetryableResponse.class::isInstance)
			.backOff(() -> waits)
			.build());
		try {
			return template.execute(() -> {
				ClientHttpResponse response = execution.execute(request, body);
				boolean retryable;
				try {
					retryable = isRetryable(response.getStatusCode());
				}
				catch (IOException | RuntimeException ex) {
					response.close();
					throw ex;
				}
				if (!retryable) {
					return response;
				}
				waits.last = response;
				throw new RetryableResponse(response);
			});
		}
		catch (RetryException ex) {
			Throwable last = ex.getLastException();
			if (last instanceof RetryableResponse rejected) {
				return rejected.response;
			}
			if (last instanceof IOException io) {
				throw io;
			}
			if (last instanceof RuntimeException runtime) {
				throw runtime;
			}
			if (last instanceof Error error) {
				throw error;
			}
			throw new IOException(last);
		}
	}

	private static boolean isRetryable(HttpStatusCode status) {
		return status.value() == 429 || status.value() == 503;
	}

	/** How long to wait after this response, before jitter: its {@code Retry-After}, or {@code null}. */
	@Nullable Duration retryAfter(ClientHttpResponse response) {
		String value = response.getHeaders().getFirst(HttpHeaders.RETRY_AFTER);
		if (value == null || value.isBlank()) {
			return null;
		}
		value = value.trim();
		if (value.chars().allMatch(Character::isDigit)) {
			return (value.length() > 9) ? this.maxTotalWait.plusSeconds(1) : Duration.ofSeconds(Long.parseLong(value));
		}
		// The forms a recipient must accept (RFC 9110, section 5.6.7): IMF-fixdate, then the obsolete RFC 850 and asctime.
		for (DateTimeFormatter format : List.of(DateTimeFormatter.RFC_1123_DATE_TIME, rfc850Date(), ASCTIME_DATE)) {
			try {
				ZonedDateTime date = ZonedDateTime.parse(value, format);
				return Duration.ofMillis(Math.max(0, date.toInstant().toEpochMilli() - this.clock.millis()));
			}
			catch (DateTimeParseException ex) {
				// try the next form
			}
		}
		return null; // not a value the header allows: back off as if it were missing
	}

	/**
	 * The RFC 850 form, whose year has two digits: one that would be more than 50 years ahead is the latest past year
	 * with those digits (RFC 9110, section 5.6.7), so the century depends on today.
	 */
	private DateTimeFormatter rfc850Date() {
		int thisYear = ZonedDateTime.now(this.clock).getYear();
		return new DateTimeFormatterBuilder().appendPattern("EEEE, dd-MMM-")
			.appendValueReduced(ChronoField.YEAR, 2, 2, thisYear - 49)
			.appendPattern(" HH:mm:ss zzz")
			.toFormatter(Locale.US);
	}

	private long jitter(Duration bound) {
		long millis = bound.toMillis();
		return (millis <= 0) ? 0 : ThreadLocalRandom.current().nextLong(millis + 1);
	}

	/**
	 * The waits of one request's attempts, from its responses; sleeps with the sleeper itself (the template then
	 * sleeps 0), so that tests can replace the sleeping.
	 */
	private final class Waits implements BackOffExecution {

		@Nullable ClientHttpResponse last;

		private int retries;

		private long waitedMillis;

		@Override
		public long nextBackOff() {
			ClientHttpResponse last = this.last;
			if (last == null || this.retries + 1 >= RetryAfterInterceptor.this.maxAttempts) {
				return STOP;
			}
			Duration asked = retryAfter(last);
			long wait;
			long budget = RetryAfterInterceptor.this.maxTotalWait.toMillis() - this.waitedMillis;
			if (asked != null) {
				// The jitter never turns a wait that fits the budget into one that does not.
				long room = Math.max(0, budget - asked.toMillis());
				wait = asked.toMillis() + jitter(Duration.ofMillis(Math.min(room,
						RetryAfterInterceptor.this.maxJitter.toMillis())));
			}
			else {
				long ceiling = Math.min(RetryAfterInterceptor.this.maxBackoff.toMillis(),
						RetryAfterInterceptor.this.initialBackoff.toMillis() << Math.min(this.retries, 20));
				wait = jitter(Duration.ofMillis(ceiling)); // full jitter
			}
			if (this.waitedMillis + wait > RetryAfterInterceptor.this.maxTotalWait.toMillis()) {
				return STOP;
			}
			try {
				RetryAfterInterceptor.this.sleeper.sleep(Duration.ofMillis(wait));
			}
			catch (InterruptedException ex) {
				// Give up, and hand the caller the last response, still open.
				Thread.currentThread().interrupt();
				return STOP;
			}
			this.retries++;
			this.waitedMillis += wait;
			last.close();
			this.last = null;
			return 0;
		}

	}

	/** A response worth retrying, carried through the template as an exception. */
	private static final class RetryableResponse extends RuntimeException {

		private final transient ClientHttpResponse response;

		RetryableResponse(ClientHttpResponse response) {
			super(null, null, false, false);
			this.response = response;
		}

	}

	/**
	 * Waits between attempts; {@code Thread::sleep} by default.
	 */
	@FunctionalInterface
	public interface Sleeper {

		/**
		 * Wait for the given time.
		 * @param duration the time to wait
		 * @throws InterruptedException if interrupted
		 */
		void sleep(Duration duration) throws InterruptedException;

	}

	/**
	 * Builder for {@link RetryAfterInterceptor}.
	 */
	public static final class Builder {

		private int maxAttempts = 3;

		private Duration maxTotalWait = Duration.ofSeconds(30);

		private Duration maxJitter = Duration.ofSeconds(1);

		private Duration initialBackoff = Duration.ofMillis(500);

		private Duration maxBackoff = Duration.ofSeconds(10);

		private boolean retryNonIdempotent;

		private Sleeper sleeper = (duration) -> Thread.sleep(duration.toMillis());

		private Clock clock = Clock.systemUTC();

		private Builder() {
		}

		/**
		 * Set the most attempts of one request, the first included; 3 by default.
		 * @param maxAttempts the attempts, at least 1
		 * @return this builder
		 */
		public Builder maxAttempts(int maxAttempts) {
			if (maxAttempts < 1) {
				throw new IllegalArgumentException("'maxAttempts' must be at least 1 but was " + maxAttempts);
			}
			this.maxAttempts = maxAttempts;
			return this;
		}

		/**
		 * Set the most time one request may spend waiting, jitter included; 30s by default. A wait that would go
		 * beyond it is not made: the last response is returned instead.
		 * @param maxTotalWait the bound
		 * @return this builder
		 */
		public Builder maxTotalWait(Duration maxTotalWait) {
			this.maxTotalWait = nonNegative(maxTotalWait, "maxTotalWait");
			return this;
		}

		/**
		 * Set the most random time added to {@code Retry-After}; 1s by default.
		 * @param maxJitter the bound of the jitter
		 * @return this builder
		 */
		public Builder maxJitter(Duration maxJitter) {
			this.maxJitter = nonNegative(maxJitter, "maxJitter");
			return this;
		}

		/**
		 * Set the exponential backoff used without {@code Retry-After}: the bound of the first wait, doubling up to
		 * {@code max}; each wait is random below its bound (full jitter). 500ms and 10s by default.
		 * @param initial the first bound
		 * @param max the largest bound
		 * @return this builder
		 */
		public Builder backoff(Duration initial, Duration max) {
			this.initialBackoff = nonNegative(initial, "initial backoff");
			this.maxBackoff = nonNegative(max, "max backoff");
			return this;
		}

		/**
		 * Retry non-idempotent methods (POST, PATCH) too; off by default, since the server may have acted on a
		 * request it answered with 503.
		 * @param retryNonIdempotent whether to retry them
		 * @return this builder
		 */
		public Builder retryNonIdempotent(boolean retryNonIdempotent) {
			this.retryNonIdempotent = retryNonIdempotent;
			return this;
		}

		/**
		 * Set how to wait; {@code Thread.sleep} by default. Tests pass one that records the waits.
		 * @param sleeper the sleeper
		 * @return this builder
		 */
		public Builder sleeper(Sleeper sleeper) {
			this.sleeper = sleeper;
			return this;
		}

		/**
		 * Set the clock that an HTTP-date {@code Retry-After} is counted down from; the system's by default.
		 * @param clock the clock
		 * @return this builder
		 * @since 0.2.0
		 */
		public Builder clock(Clock clock) {
			this.clock = clock;
			return this;
		}

		/**
		 * Build the interceptor.
		 * @return the interceptor
		 */
		public RetryAfterInterceptor build() {
			return new RetryAfterInterceptor(this);
		}

		private static Duration nonNegative(Duration value, String name) {
			if (value.isNegative()) {
				throw new IllegalArgumentException("'" + name + "' must not be negative but was " + value);
			}
			return value;
		}

	}

}
