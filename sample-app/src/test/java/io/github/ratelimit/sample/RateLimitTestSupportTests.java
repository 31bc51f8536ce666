package io.github.ratelimit.sample;

import java.time.Duration;

import io.github.ratelimit.testing.RateLimitTestClock;
import io.github.ratelimit.testing.ResetRateLimits;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.context.annotation.Bean;
import org.springframework.test.web.servlet.MockMvc;

import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * The example of the test support in docs/testing.md: every test starts with fresh counters, whatever ran before in the same
 * context, and the clock moves by hand.
 */
@SpringBootTest
@AutoConfigureMockMvc
@ExtendWith(ResetRateLimits.class)
class RateLimitTestSupportTests {

	@Autowired
	MockMvc mvc;

	@Autowired
	RateLimitTestClock clock;

	@RepeatedTest(3)
	void eachTestHasTheWholeLimit() throws Exception {
		for (int i = 0; i < 5; i++) {
			this.mvc.perform(get("/api/v1/resources")).andExpect(status().isOk());
		}
		this.mvc.perform(get("/api/v1/resources")).andExpect(status().isTooManyRequests());
	}

	@Test
	void theLimitComesBackWhenTheClockPassesTheWindow() throws Exception {
		for (int i = 0; i < 5; i++) {
			this.mvc.perform(get("/api/v1/resources"));
		}
		this.mvc.perform(get("/api/v1/resources")).andExpect(status().isTooManyRequests());
		this.clock.advance(Duration.ofMinutes(1));
		this.mvc.perform(get("/api/v1/resources"))
			.andExpect(status().isOk())
			.andExpect(header().string("RateLimit-Remaining", "4"));
	}

	@TestConfiguration
	static class Clock {

		@Bean
		RateLimitTestClock rateLimitTimeSource() {
			return RateLimitTestClock.at("2030-01-01T00:00:00Z");
		}

	}

}
