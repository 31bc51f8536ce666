package io.github.ratelimit.autoconfigure;

import java.math.BigInteger;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.web.RateLimitStatus;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpStatus;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * Costs known only once the request is served, through the auto-configuration: reserved before the method runs,
 * settled when it returns (or throws) to what a settle expression or the handler ({@link RateLimitStatus#settle})
 * says.
 */
class SettledCostIntegrationTests {

	private final WebApplicationContextRunner runner = WebTestSupport.webApplication()
		.withUserConfiguration(Controllers.class);

	@Test
	void aCostTheHandlerReportsSettlesTheReservation() {
		this.runner.run((context) -> {
			MockMvc mvc = WebTestSupport.mockMvc(context);
			// Each reserves 5 and costs 1: 6 pass (a 7th finds 4 left, less than it must reserve), not 2.
			for (int i = 0; i < 6; i++) {
				mvc.perform(get("/generate").param("tokens", "1")).andExpect(status().isOk());
			}
			mvc.perform(get("/generate").param("tokens", "1")).andExpect(status().isTooManyRequests());
		});
	}

	@Test
	void aMethodThatFailsIsSettledToWhatItReportedBeforeItFailed() {
		this.runner.run((context) -> {
			MockMvc mvc = WebTestSupport.mockMvc(context);
			// Each reserves 5 and reports 1 before failing: 6 pass, as if they had succeeded.
			for (int i = 0; i < 6; i++) {
				mvc.perform(get("/generate-failing").param("tokens", "1")).andExpect(status().isBadGateway());
			}
			mvc.perform(get("/generate").param("tokens", "1")).andExpect(status().isTooManyRequests());
		});
	}

	@Test
	void aSettleExpressionThatFailsLeavesTheReservationAndNeverFailsTheRequest() {
		this.runner.withPropertyValues("ratelimit.policies.generate.settle=#result.noSuchProperty").run((context) -> {
			MockMvc mvc = WebTestSupport.mockMvc(context);
			mvc.perform(get("/exported").param("rows", "1")).andExpect(status().isOk());
			mvc.perform(get("/exported").param("rows", "1")).andExpect(status().isOk());
			mvc.perform(get("/exported").param("rows", "1")).andExpect(status().isTooManyRequests());
		});
	}

	@Test
	void aSettledCostBeyondWhatALongHoldsIsTheLargestDebtNotWhatItWrapsTo() {
		this.runner.run((context) -> {
			MockMvc mvc = WebTestSupport.mockMvc(context);
			// 2^64 + 5 would wrap to 5 as a long, and leave 5 of the 10.
			mvc.perform(get("/huge")).andExpect(status().isOk());
			mvc.perform(get("/huge")).andExpect(status().isTooManyRequests());
		});
	}

	@Test
	void aHandlerReportingMoreThanWasReservedPutsTheKeyInDebt() {
		this.runner.run((context) -> {
			MockMvc mvc = WebTestSupport.mockMvc(context);
			mvc.perform(get("/generate").param("tokens", "25")).andExpect(status().isOk());
			mvc.perform(get("/generate").param("tokens", "1")).andExpect(status().isTooManyRequests());
		});
	}

	@Test
	void aDebtLongerThanTheWindowIsAnnouncedInRetryAfterAndTheEffectiveWindowUntilRepaid() {
		this.runner.withPropertyValues("ratelimit.headers.style=draft-6,draft-11").run((context) -> {
			MockMvc mvc = WebTestSupport.mockMvc(context);
			mvc.perform(get("/generate").param("tokens", "25")).andExpect(status().isOk());
			// 15 tokens in debt at one every 6 minutes: the next reservation of 5 fits in 2 hours, one unit in 96 minutes.
			mvc.perform(get("/generate").param("tokens", "1"))
				.andExpect(status().isTooManyRequests())
				.andExpect(header().string("Retry-After", "7200"))
				.andExpect(header().string("RateLimit-Reset", "9000"))
				.andExpect(header().string("RateLimit", "\"generate\";r=0;t=5760"));
		});
	}

	@Test
	void aSettledCostOnAWindowThatForgivesItsDebtFailsTheStartUpNamingTheWayOut() {
		this.runner.withPropertyValues("ratelimit.policies.generate.algorithm=fixed")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.hasMessageContaining("'settle' needs an algorithm that keeps a debt until it is repaid")
				.hasMessageContaining("not FIXED"));
	}

	@Configuration(proxyBeanMethods = false)
	static class Controllers {

		@Bean
		GenerateController generateController() {
			return new GenerateController();
		}

	}

	@RestController
	static class GenerateController {

		@GetMapping("/generate")
		@RateLimited(name = "generate", algorithm = Algorithm.TOKEN_BUCKET, limit = 10, window = "1h", cost = "5",
				settle = "#reported")
		String generate(@RequestParam int tokens, RateLimitStatus status) {
			status.settle("generate", tokens);
			return "generated " + tokens;
		}

		@GetMapping("/generate-failing")
		@RateLimited(name = "generate", algorithm = Algorithm.TOKEN_BUCKET, limit = 10, window = "1h", cost = "5",
				settle = "#reported")
		String generateFailing(@RequestParam int tokens, RateLimitStatus status) {
			status.settle("generate", tokens);
			throw new ResponseStatusException(HttpStatus.BAD_GATEWAY, "the model failed after " + tokens + " tokens");
		}

		@GetMapping("/huge")
		@RateLimited(name = "huge", algorithm = Algorithm.TOKEN_BUCKET, limit = 10, window = "1h", cost = "5",
				settle = "#result")
		BigInteger huge() {
			return BigInteger.ONE.shiftLeft(64).add(BigInteger.valueOf(5));
		}

		@GetMapping("/exported")
		@RateLimited(name = "exported", algorithm = Algorithm.SLIDING_LOG, limit = 10, window = "1h", cost = "5",
				settle = "#result.length() < 0 ? 0 : #result.noSuchProperty")
		String exported(@RequestParam int rows) {
			return "rows " + rows;
		}

	}

}
