package io.github.ratelimit.engine;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.ratelimit.Decision;
import io.github.ratelimit.PolicyMode;
import io.github.ratelimit.RateLimitListener;
import io.github.ratelimit.RateLimitPolicy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;

@ExtendWith(OutputCaptureExtension.class)
class ShadowReporterTests {

	private final RateLimitPolicy policy = RateLimitPolicy.builder("login").limit(5).window(Duration.ofMinutes(15))
		.mode(PolicyMode.SHADOW).build();

	private final Decision rejection = Decision.rejected(5, 0, 60_000, 60_000);

	@Test
	void wouldBeRejectionsAreLoggedAtMostOnceAMinuteWithHowManySinceTheLastLine(CapturedOutput output) {
		AtomicLong nanos = new AtomicLong(123);
		AtomicInteger told = new AtomicInteger();
		RateLimitListener listener = new RateLimitListener() {

			@Override
			public void onShadowRejection(RateLimitPolicy policy, Decision decision) {
				told.incrementAndGet();
			}

		};
		ShadowReporter reporter = new ShadowReporter(listener, nanos::get);
		for (int i = 0; i < 1_000; i++) {
			reporter.rejected(this.policy, this.rejection);
			nanos.addAndGet(Duration.ofMillis(10).toNanos()); // 10 s in all
		}
		assertThat(lines(output)).isEqualTo(1);
		assertThat(output).contains("would have rejected 1 request(s)");
		nanos.addAndGet(Duration.ofMinutes(1).toNanos());
		reporter.rejected(this.policy, this.rejection);
		assertThat(lines(output)).isEqualTo(2);
		assertThat(output).contains("would have rejected 1000 request(s) since its last report");
		assertThat(told).as("the listener hears of every one").hasValue(1_001);
	}

	private static long lines(CapturedOutput output) {
		return output.getAll().lines().filter((line) -> line.contains("would have rejected")).count();
	}

}
