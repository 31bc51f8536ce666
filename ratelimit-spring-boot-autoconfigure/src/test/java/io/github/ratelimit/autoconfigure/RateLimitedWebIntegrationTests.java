package io.github.ratelimit.autoconfigure;

import java.security.Principal;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.conformance.MutableTimeSource;
import io.github.ratelimit.web.RateLimitHeadersWriter;
import jakarta.servlet.http.HttpServletRequest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.MediaType;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.content;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * {@code @RateLimited} controllers over HTTP: headers on 200 and 429, the problem body, keys and costs.
 */
class RateLimitedWebIntegrationTests {

	private final WebApplicationContextRunner runner = WebTestSupport.webApplication()
		.withUserConfiguration(TestControllers.class);

	@Test
	void everyResponseOfALimitedEndpointCarriesTheRateLimitHeaders() {
		this.runner.run((context) -> {
			MockMvc mvc = WebTestSupport.mockMvc(context);
			mvc.perform(get("/resources"))
				.andExpect(status().isOk())
				.andExpect(header().string("RateLimit-Limit", "2"))
				.andExpect(header().string("RateLimit-Remaining", "1"))
				.andExpect(header().string("RateLimit-Reset", "30"))
				.andExpect(header().doesNotExist("Retry-After"));
			mvc.perform(get("/resources")).andExpect(status().isOk()).andExpect(header().string("RateLimit-Remaining", "0"));
		});
	}

	@Test
	void requestOverTheLimitGets429WithRetryAfterAndAProblemBody() {
		this.runner.run((context) -> {
			MockMvc mvc = WebTestSupport.mockMvc(context);
			mvc.perform(get("/resources"));
			mvc.perform(get("/resources"));
			mvc.perform(get("/resources"))
				.andExpect(status().isTooManyRequests())
				.andExpect(content().contentTypeCompatibleWith(MediaType.APPLICATION_PROBLEM_JSON))
				.andExpect(header().string("RateLimit-Limit", "2"))
				.andExpect(header().string("RateLimit-Remaining", "0"))
				.andExpect(header().string("RateLimit-Reset", "30"))
				.andExpect(header().string("Retry-After", "30"))
				.andExpect(jsonPath("$.status").value(429))
				.andExpect(jsonPath("$.title").value("Too Many Requests"))
				.andExpect(jsonPath("$.detail")
					.value("Rate limit of policy 'TestController.resources' exceeded. Retry after 30 seconds."))
				.andExpect(jsonPath("$.policy").value("TestController.resources"))
				.andExpect(jsonPath("$.retryAfter").value(30))
				.andExpect(jsonPath("$.type").value("https://iana.org/assignments/http-problem-types#quota-exceeded"))
				.andExpect(jsonPath("$['violated-policies']").value(org.hamcrest.Matchers.contains("TestController.resources")));
		});
	}

	@Test
	void theHeaderStylesAreChosenByPropertyAndDraft10ListsEveryPolicyMostRestrictiveFirst() {
		this.runner.withPropertyValues("ratelimit.headers.style=draft-10,x-ratelimit").run((context) -> {
			MockMvc mvc = WebTestSupport.mockMvc(context);
			String policies = mvc.perform(get("/layered"))
				.andExpect(status().isOk())
				.andExpect(header().doesNotExist("RateLimit-Limit"))
				.andExpect(header().string("X-RateLimit-Limit", "2"))
				.andExpect(header().string("X-RateLimit-Remaining", "1"))
				.andReturn()
				.getResponse()
				.getHeader("RateLimit-Policy");
			assertThat(io.github.ratelimit.web.StructuredFieldListAccess.names(policies))
				.containsExactly("layered-per-second", "layered-per-minute");
			String rejected = mvc.perform(get("/layered")).andReturn().getResponse().getHeader("RateLimit");
			assertThat(io.github.ratelimit.web.StructuredFieldListAccess.names(rejected))
				.containsExactly("layered-per-second", "layered-per-minute");
			mvc.perform(get("/layered"))
				.andExpect(status().isTooManyRequests())
				.andExpect(header().exists("Retry-After"))
				.andExpect(jsonPath("$['violated-policies']").value(org.hamcrest.Matchers.contains("layered-per-second")));
		});
	}

	@Test
	void anApplicationsHeadersWriterReplacesTheHeadersAndEveryRejectionStillSaysWhenToRetry() {
		RateLimitHeadersWriter own = (headers, policy, decision) -> headers.set("X-Calls-Left",
				Long.toString(decision.remaining()));
		this.runner.withBean(RateLimitHeadersWriter.class, () -> own).run((context) -> {
			MockMvc mvc = WebTestSupport.mockMvc(context);
			mvc.perform(get("/resources"))
				.andExpect(status().isOk())
				.andExpect(header().string("X-Calls-Left", "1"))
				.andExpect(header().doesNotExist("RateLimit-Limit"));
			mvc.perform(get("/resources"));
			mvc.perform(get("/resources"))
				.andExpect(status().isTooManyRequests())
				.andExpect(header().string("X-Calls-Left", "0"))
				.andExpect(header().doesNotExist("RateLimit-Limit"))
				.andExpect(header().stringValues("Retry-After", "30"));
		});
	}

	@Test
	void theXRateLimitResetIsSentInEpochSecondsWhenConfigured() {
		this.runner.withPropertyValues("ratelimit.headers.style=x-ratelimit", "ratelimit.headers.reset-format=epoch-seconds")
			.run((context) -> {
				MockMvc mvc = WebTestSupport.mockMvc(context);
				// The window ends at 00:01:00 on the test's clock.
				long endOfWindow = java.time.Instant.parse(WebTestSupport.START).plusSeconds(30).getEpochSecond();
				mvc.perform(get("/resources"))
					.andExpect(status().isOk())
					.andExpect(header().string("X-RateLimit-Reset", Long.toString(endOfWindow)))
					.andExpect(header().doesNotExist("RateLimit-Reset"));
			});
	}

	@Test
	void everyPolicyThatRejectsARequestIsNamedAmongTheViolatedPoliciesTheLongestFirst() {
		this.runner.run((context) -> {
			MockMvc mvc = WebTestSupport.mockMvc(context);
			mvc.perform(get("/doubly-limited")).andExpect(status().isOk());
			mvc.perform(get("/doubly-limited"))
				.andExpect(status().isTooManyRequests())
				.andExpect(header().string("Retry-After", "3570"))
				.andExpect(jsonPath("$.policy").value("doubly-per-hour"))
				.andExpect(jsonPath("$['violated-policies']")
					.value(org.hamcrest.Matchers.contains("doubly-per-hour", "doubly-per-minute")));
		});
	}

	@Test
	void noneCombinedWithAnotherHeaderStyleFailsStartUpNamingTheProperty() {
		this.runner.withPropertyValues("ratelimit.headers.style=none,draft-6")
			.run((context) -> assertThat(context).getFailure()
				.hasStackTraceContaining("ratelimit.headers.style")
				.hasStackTraceContaining("'none' cannot be combined with other styles"));
	}

	@Test
	void aHandlerMethodCanTellItsCallerTheLimitsLeftThroughRateLimitStatus() {
		this.runner.run((context) -> {
			MockMvc mvc = WebTestSupport.mockMvc(context);
			mvc.perform(get("/status")).andExpect(status().isOk()).andExpect(content().string("status-per-minute: 2 of 3 left"));
			mvc.perform(get("/status")).andExpect(content().string("status-per-minute: 1 of 3 left"));
			mvc.perform(get("/free-status")).andExpect(status().isOk()).andExpect(content().string("no limits"));
		});
	}

	@Test
	void theLimitComesBackWithTheNextWindow() {
		this.runner.run((context) -> {
			MockMvc mvc = WebTestSupport.mockMvc(context);
			for (int i = 0; i < 3; i++) {
				mvc.perform(get("/resources"));
			}
			context.getBean(MutableTimeSource.class).advance(Duration.ofSeconds(30));
			mvc.perform(get("/resources")).andExpect(status().isOk()).andExpect(header().string("RateLimit-Reset", "60"));
		});
	}

	@Test
	void aMonthlyQuotaInAZoneCountsDownToTheZonesMidnightAndComesBackWithTheMonth() {
		this.runner
			.withPropertyValues("ratelimit.policies.orders.window=1M", "ratelimit.policies.orders.zone=Europe/Berlin",
					"ratelimit.headers.style=draft-10")
			.run((context) -> {
				MutableTimeSource clock = context.getBean(MutableTimeSource.class);
				clock.set(Instant.parse("2030-01-31T22:59:30Z").toEpochMilli()); // 23:59:30 in Berlin
				MockMvc mvc = WebTestSupport.mockMvc(context);
				for (int i = 0; i < 3; i++) {
					mvc.perform(get("/users/ann/orders"))
						.andExpect(status().isOk())
						.andExpect(header().string("RateLimit-Policy", "\"orders\";q=3;w=2592000"));
				}
				mvc.perform(get("/users/ann/orders"))
					.andExpect(status().isTooManyRequests())
					.andExpect(header().string("Retry-After", "30"))
					.andExpect(header().string("RateLimit", "\"orders\";r=0;t=30"));
				clock.advance(Duration.ofSeconds(30)); // February in Berlin
				mvc.perform(get("/users/ann/orders")).andExpect(status().isOk());
			});
	}

	@Test
	void theDefaultKeyIsTheClientIpAddress() {
		this.runner.run((context) -> {
			MockMvc mvc = WebTestSupport.mockMvc(context);
			for (int i = 0; i < 2; i++) {
				mvc.perform(get("/resources").with((request) -> {
					request.setRemoteAddr("10.0.0.1");
					return request;
				})).andExpect(status().isOk());
			}
			mvc.perform(get("/resources").with((request) -> {
				request.setRemoteAddr("10.0.0.1");
				return request;
			})).andExpect(status().isTooManyRequests());
			mvc.perform(get("/resources").with((request) -> {
				request.setRemoteAddr("10.0.0.2");
				return request;
			})).andExpect(status().isOk());
		});
	}

	@Test
	void aKeyExpressionNamingAnArgumentCountsPerArgument() {
		this.runner.run((context) -> {
			MockMvc mvc = WebTestSupport.mockMvc(context);
			for (int i = 0; i < 3; i++) {
				mvc.perform(get("/users/alice/orders")).andExpect(status().isOk());
			}
			mvc.perform(get("/users/alice/orders"))
				.andExpect(status().isTooManyRequests())
				.andExpect(jsonPath("$.policy").value("orders"));
			mvc.perform(get("/users/bob/orders"))
				.andExpect(status().isOk())
				.andExpect(header().string("RateLimit-Remaining", "2"));
		});
	}

	@Test
	void keyExpressionsSeeTheRequestThePrincipalAndBeans() {
		this.runner.run((context) -> {
			MockMvc mvc = WebTestSupport.mockMvc(context);
			mvc.perform(get("/by-header").header("X-Api-Key", "k1")).andExpect(status().isOk());
			mvc.perform(get("/by-header").header("X-Api-Key", "k1")).andExpect(status().isTooManyRequests());
			mvc.perform(get("/by-header").header("X-Api-Key", "k2")).andExpect(status().isOk());
			Principal alice = () -> "alice";
			mvc.perform(get("/by-principal").principal(alice)).andExpect(status().isOk());
			mvc.perform(get("/by-principal").principal(alice)).andExpect(status().isTooManyRequests());
			mvc.perform(get("/by-principal").principal(() -> "bob")).andExpect(status().isOk());
			mvc.perform(get("/by-bean").header("X-Tenant", "acme")).andExpect(status().isOk());
			mvc.perform(get("/by-bean").header("X-Tenant", "ACME")).andExpect(status().isTooManyRequests());
		});
	}

	@Test
	void aKeyThatIsNullOrFailsFallsBackToTheClientIpAddress() {
		this.runner.run((context) -> {
			MockMvc mvc = WebTestSupport.mockMvc(context);
			// No X-Api-Key header: the key is null, so the client IP counts.
			mvc.perform(get("/by-header")).andExpect(status().isOk());
			mvc.perform(get("/by-header").with((request) -> {
				request.setRemoteAddr("10.0.0.9");
				return request;
			})).andExpect(status().isOk());
			mvc.perform(get("/by-header")).andExpect(status().isTooManyRequests());
			// Anonymous: #principal.name throws; still the client IP, still no 500.
			mvc.perform(get("/by-principal")).andExpect(status().isOk());
			mvc.perform(get("/by-principal")).andExpect(status().isTooManyRequests());
		});
	}

	@Test
	@ExtendWith(OutputCaptureExtension.class)
	void aKeyFallbackIsLoggedAtWarnOncePerPolicy(CapturedOutput output) {
		this.runner.run((context) -> {
			MockMvc mvc = WebTestSupport.mockMvc(context);
			for (int i = 0; i < 3; i++) {
				mvc.perform(get("/by-principal"));
			}
		});
		String warning = "Key expression '#principal.name' of rate limit policy 'by-principal' on TestController#byPrincipal() "
				+ "failed: ";
		assertThat(output).contains(warning).contains("falling back to the client IP address (logged once per policy)");
		assertThat(output.getOut().split(java.util.regex.Pattern.quote(warning))).hasSize(2);
	}

	@Test
	void aCostExpressionTakesThatManyUnits() {
		this.runner.run((context) -> {
			MockMvc mvc = WebTestSupport.mockMvc(context);
			mvc.perform(get("/batch").param("size", "7"))
				.andExpect(status().isOk())
				.andExpect(header().string("RateLimit-Remaining", "3"));
			mvc.perform(get("/batch").param("size", "4")).andExpect(status().isTooManyRequests());
			mvc.perform(get("/batch").param("size", "3"))
				.andExpect(status().isOk())
				.andExpect(header().string("RateLimit-Remaining", "0"));
		});
	}

	@Test
	void aCostThatIsNotAPositiveWholeNumberIsABadRequestAndCountsNothing() {
		this.runner.run((context) -> {
			MockMvc mvc = WebTestSupport.mockMvc(context);
			mvc.perform(get("/batch").param("size", "-1"))
				.andExpect(status().isBadRequest())
				.andExpect(jsonPath("$.policy").value("batch"));
			mvc.perform(get("/batch").param("size", "abc")).andExpect(status().isBadRequest());
			mvc.perform(get("/batch")).andExpect(status().isBadRequest());
			mvc.perform(get("/batch").param("size", "10"))
				.andExpect(status().isOk())
				.andExpect(header().string("RateLimit-Remaining", "0"));
		});
	}

	@Test
	void aCostAboveTheLimitIsRejectedAsNeverPassing() {
		this.runner.run((context) -> {
			MockMvc mvc = WebTestSupport.mockMvc(context);
			mvc.perform(get("/batch").param("size", "11"))
				.andExpect(status().isTooManyRequests())
				.andExpect(jsonPath("$.detail")
					.value("Request exceeds the capacity of rate limit policy 'batch' and can never pass."));
		});
	}

	@Test
	void aClassLevelAnnotationLimitsEveryHandlerMethodAndAMethodAnnotationReplacesIt() {
		this.runner.run((context) -> {
			MockMvc mvc = WebTestSupport.mockMvc(context);
			mvc.perform(get("/class/a")).andExpect(header().string("RateLimit-Limit", "1"));
			mvc.perform(get("/class/a")).andExpect(status().isTooManyRequests());
			// Each handler method has its own counter, named after it.
			mvc.perform(get("/class/b"))
				.andExpect(status().isOk())
				.andExpect(header().string("RateLimit-Limit", "1"));
			mvc.perform(get("/class/c")).andExpect(header().string("RateLimit-Limit", "5"));
			mvc.perform(get("/class/c")).andExpect(status().isOk());
		});
	}

	@Test
	void severalPoliciesOnOneMethodAreAllEnforcedAndTheHeadersShowTheTightest() {
		this.runner.run((context) -> {
			MockMvc mvc = WebTestSupport.mockMvc(context);
			mvc.perform(get("/layered"))
				.andExpect(status().isOk())
				.andExpect(header().string("RateLimit-Limit", "2"))
				.andExpect(header().string("RateLimit-Remaining", "1"));
			mvc.perform(get("/layered")).andExpect(status().isOk());
			mvc.perform(get("/layered"))
				.andExpect(status().isTooManyRequests())
				.andExpect(jsonPath("$.policy").value("layered-per-second"));
		});
	}

	@Test
	void anEndpointWithoutTheAnnotationHasNoHeaders() {
		this.runner.run((context) -> {
			MockMvc mvc = WebTestSupport.mockMvc(context);
			mvc.perform(get("/free")).andExpect(status().isOk()).andExpect(header().doesNotExist("RateLimit-Limit"));
		});
	}

	@Test
	void configurationOverridesTheAnnotationByPolicyName() {
		this.runner
			.withPropertyValues("ratelimit.policies.orders.limit=1", "ratelimit.policies.[TestController.resources].enabled=false")
			.run((context) -> {
				MockMvc mvc = WebTestSupport.mockMvc(context);
				mvc.perform(get("/users/alice/orders")).andExpect(header().string("RateLimit-Limit", "1"));
				mvc.perform(get("/users/alice/orders")).andExpect(status().isTooManyRequests());
				for (int i = 0; i < 5; i++) {
					mvc.perform(get("/resources")).andExpect(status().isOk()).andExpect(header().doesNotExist("RateLimit-Limit"));
				}
			});
	}

	@Test
	void configurationCanSwitchTheAlgorithmAndBurst() {
		this.runner
			.withPropertyValues("ratelimit.policies.orders.algorithm=token-bucket", "ratelimit.policies.orders.burst=5",
					"ratelimit.policies.orders.window=60")
			.run((context) -> {
				MockMvc mvc = WebTestSupport.mockMvc(context);
				mvc.perform(get("/users/alice/orders"))
					.andExpect(header().string("RateLimit-Limit", "5"))
					.andExpect(header().string("RateLimit-Remaining", "4"));
			});
	}

	@Configuration(proxyBeanMethods = false)
	static class TestControllers {

		@Bean
		TestController testController() {
			return new TestController();
		}

		@Bean
		ClassLimitedController classLimitedController() {
			return new ClassLimitedController();
		}

		@Bean
		Tenants tenants() {
			return new Tenants();
		}

	}

	@RestController
	static class TestController {

		@RateLimited(limit = 2, window = "1m")
		@GetMapping("/resources")
		Map<String, String> resources() {
			return Map.of("status", "success");
		}

		@RateLimited(name = "orders", limit = 3, window = "1m", key = "#userId")
		@GetMapping("/users/{userId}/orders")
		Map<String, String> orders(@PathVariable String userId) {
			return Map.of("user", userId);
		}

		@RateLimited(name = "by-header", limit = 1, window = "1m", key = "#request.getHeader('X-Api-Key')")
		@GetMapping("/by-header")
		String byHeader() {
			return "ok";
		}

		@RateLimited(name = "by-principal", limit = 1, window = "1m", key = "#principal.name")
		@GetMapping("/by-principal")
		String byPrincipal() {
			return "ok";
		}

		@RateLimited(name = "by-bean", limit = 1, window = "1m", key = "@tenants.normalize(#request)")
		@GetMapping("/by-bean")
		String byBean() {
			return "ok";
		}

		@RateLimited(name = "batch", limit = 10, window = "1m", cost = "#size")
		@GetMapping("/batch")
		String batch(@RequestParam(required = false) String size) {
			return "ok";
		}

		@RateLimited(name = "status-per-minute", limit = 3, window = "1m")
		@RateLimited(name = "status-per-day", limit = 100, window = "1d")
		@GetMapping("/status")
		String status(io.github.ratelimit.web.RateLimitStatus status) {
			io.github.ratelimit.web.AppliedRateLimit tightest = status.mostRestrictive().orElseThrow();
			return tightest.policy().name() + ": " + tightest.decision().remaining() + " of "
					+ tightest.decision().limit() + " left";
		}

		@GetMapping("/free-status")
		String freeStatus(io.github.ratelimit.web.RateLimitStatus status) {
			return status.limits().isEmpty() ? "no limits" : "limits";
		}

		@RateLimited(name = "layered-per-second", limit = 2, window = "1s")
		@RateLimited(name = "layered-per-minute", limit = 10, window = "1m", algorithm = Algorithm.SLIDING_LOG)
		@GetMapping("/layered")
		String layered() {
			return "ok";
		}

		@GetMapping("/free")
		String free() {
			return "ok";
		}

		@RateLimited(name = "doubly-per-minute", limit = 1, window = "1m")
		@RateLimited(name = "doubly-per-hour", limit = 1, window = "1h")
		@GetMapping("/doubly-limited")
		String doublyLimited() {
			return "ok";
		}

	}

	@RestController
	@RateLimited(limit = 1, window = "1m")
	static class ClassLimitedController {

		@GetMapping("/class/a")
		String a() {
			return "a";
		}

		@GetMapping("/class/b")
		String b() {
			return "b";
		}

		@RateLimited(limit = 5, window = "1m")
		@GetMapping("/class/c")
		String c() {
			return "c";
		}

		public String notAHandler() {
			return "not limited";
		}

	}

	static class Tenants {

		public String normalize(HttpServletRequest request) {
			return request.getHeader("X-Tenant").toLowerCase();
		}

	}

}
