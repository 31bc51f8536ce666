package io.github.ratelimit.integration;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import io.github.ratelimit.test.RedisServer;
import io.github.ratelimit.web.ClientIpResolver;
import io.github.ratelimit.web.RateLimitPlanResolver;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.http.converter.autoconfigure.HttpMessageConvertersAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.webmvc.autoconfigure.DispatcherServletAutoConfiguration;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.setup.MockMvcBuilders;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * Hostile keys and costs from the request, through the Redis store: each has a documented outcome, none is a 500,
 * none changes another key's count, and none grows Redis beyond a bounded key.
 */
class BadInputIntegrationTests {

	private static RedisServer redis;

	private final String prefix = "bad-input-" + UUID.randomUUID();

	@BeforeAll
	static void startRedis() {
		redis = RedisServer.start();
	}

	@AfterAll
	static void stopRedis() {
		redis.close();
	}

	private WebApplicationContextRunner application() {
		return new WebApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(JacksonAutoConfiguration.class,
					HttpMessageConvertersAutoConfiguration.class, DispatcherServletAutoConfiguration.class,
					WebMvcAutoConfiguration.class, DataRedisAutoConfiguration.class, RateLimitAutoConfiguration.class))
			.withUserConfiguration(KeyedController.class)
			.withPropertyValues("spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port(),
					"ratelimit.redis.key-prefix=" + this.prefix, "ratelimit.redis.timeout=10s");
	}

	@Test
	void everyHostileKeyIsCountedOnItsOwnWithoutA500() {
		Map<String, String> keys = new LinkedHashMap<>();
		keys.put("newline", "a\nb");
		keys.put("carriage return", "a\r\nSET x y");
		keys.put("nul and controls", "a\u0000b\u0007c\u001b[31m");
		keys.put("unicode", "ユーザー😀é");
		keys.put("braces", "}{user}{");
		keys.put("percent lookalike", "%7D%7Buser%7D%7B");
		keys.put("lua-looking", "'); redis.call('FLUSHALL'); --");
		keys.put("separator", "a:b");
		keys.put("huge", "x".repeat(100_000));
		keys.put("huge too", "x".repeat(100_000) + "y");
		application().run((context) -> {
			MockMvc mvc = MockMvcBuilders.webAppContextSetup(context).build();
			for (Map.Entry<String, String> key : keys.entrySet()) {
				for (int i = 0; i < 2; i++) {
					mvc.perform(get("/keyed").param("k", key.getValue())).andExpect(status().isOk());
				}
				mvc.perform(get("/keyed").param("k", key.getValue())).andExpect(status().isTooManyRequests());
			}
		});
		List<String> stored = counters();
		assertThat(stored).as("one counter per distinct key").hasSize(keys.size());
		assertThat(stored).allSatisfy((key) -> {
			assertThat(key.length()).isLessThan(this.prefix.length() + 120);
			assertThat(key.chars().filter((c) -> c == '{').count()).isEqualTo(1);
			assertThat(key.chars().filter((c) -> c == '}').count()).isEqualTo(1);
			assertThat(key.chars().filter((c) -> c < 0x20).count()).isZero();
		});
		assertThat(redis.call("DBSIZE")).as("nothing was flushed or added by a key").isNotEqualTo(0L);
	}

	/** The counters under this test's prefix: every key but the policy's list of parameter sets. */
	private List<String> counters() {
		@SuppressWarnings("unchecked")
		List<String> stored = (List<String>) redis.call("KEYS", this.prefix + ":*");
		assertThat(stored).contains(this.prefix + ":{keyed}:versions");
		// Besides the counters: the policy's versions, and each instance's marker of Redis keeping its data.
		return stored.stream()
			.filter((key) -> !key.equals(this.prefix + ":{keyed}:versions") && !key.startsWith(this.prefix + ":alive:"))
			.toList();
	}

	@Test
	void keysThatAreNullOrEmptyFallBackToTheClientIp() {
		application().run((context) -> {
			MockMvc mvc = MockMvcBuilders.webAppContextSetup(context).build();
			mvc.perform(get("/keyed")).andExpect(status().isOk());
			mvc.perform(get("/keyed").param("k", "")).andExpect(status().isOk());
			mvc.perform(get("/keyed")).andExpect(status().isTooManyRequests());
		});
		List<String> stored = counters();
		// The fallback has a namespace of its own: '#' and ':' percent-encoded.
		assertThat(stored).singleElement().asString().isEqualTo(this.prefix + ":{keyed:%23ip%3A127.0.0.1}:fx:864000000000");
	}

	@Test
	void aKeyValueCannotReachTheCounterItsClientIpFallsBackTo() {
		application().run((context) -> {
			MockMvc mvc = MockMvcBuilders.webAppContextSetup(context).build();
			mvc.perform(get("/keyed")).andExpect(status().isOk());
			mvc.perform(get("/keyed")).andExpect(status().isOk());
			mvc.perform(get("/keyed")).andExpect(status().isTooManyRequests());
			for (String forged : new String[] { "#ip:127.0.0.1", "127.0.0.1", "#none", "##ip:127.0.0.1" }) {
				mvc.perform(get("/keyed").param("k", forged)).andExpect(status().isOk());
			}
		});
	}

	@Test
	void keyValuesWhoseTextIsNotTheirValueFallBackToTheClientIpWithoutA500() {
		application().run((context) -> {
			MockMvc mvc = MockMvcBuilders.webAppContextSetup(context).build();
			// Each would be a new key per request (an array, the request itself) or a 500 (a throwing toString).
			for (String path : new String[] { "/array", "/whole-request", "/throwing" }) {
				mvc.perform(get(path).param("k", "a", "b")).andExpect(status().isOk());
				mvc.perform(get(path).param("k", "a", "b")).andExpect(status().isOk());
				mvc.perform(get(path).param("k", "a", "b")).andExpect(status().isTooManyRequests());
			}
			mvc.perform(get("/typed").param("id", "7")).andExpect(status().isOk());
			mvc.perform(get("/typed").param("id", "7")).andExpect(status().isOk());
			mvc.perform(get("/typed").param("id", "7")).andExpect(status().isTooManyRequests());
			mvc.perform(get("/typed").param("id", "8")).andExpect(status().isOk());
		});
	}

	@Test
	void costsFromTheRequestThatAreNotPositiveWholeNumbersAreRejectedAndCountNothing() {
		application().run((context) -> {
			MockMvc mvc = MockMvcBuilders.webAppContextSetup(context).build();
			for (String cost : new String[] { "0", "-3", "1.5", "abc", "99999999999999999999999", "" }) {
				mvc.perform(get("/costly").param("cost", cost)).andExpect(status().isBadRequest());
			}
			mvc.perform(get("/costly").param("cost", "1000000")).andExpect(status().isTooManyRequests());
			mvc.perform(get("/costly").param("cost", "5")).andExpect(status().isOk());
		});
	}

	@Test
	void aCostExpressionThatThrowsCountsTheCapacityUnlessThePolicyFailsClosed() {
		application()
			.withPropertyValues("ratelimit.policies.priced-allow.failure-mode=allow",
					"ratelimit.policies.priced-deny.failure-mode=deny",
					"ratelimit.policies.priced-local.failure-mode=local")
			.run((context) -> {
				MockMvc mvc = MockMvcBuilders.webAppContextSetup(context).build();
				for (String path : new String[] { "/priced-allow", "/priced-local" }) {
					mvc.perform(get(path)).andExpect(status().isOk());
					mvc.perform(get(path)).andExpect(status().isTooManyRequests());
				}
				mvc.perform(get("/priced-deny")).andExpect(status().isServiceUnavailable())
					.andExpect(header().exists("Retry-After"));
			});
	}

	@Test
	void aClientThatMakesTheCostExpressionThrowPaysTheWholeCapacity() {
		application().run((context) -> {
			MockMvc mvc = MockMvcBuilders.webAppContextSetup(context).build();
			// The items left out: #items.size() throws, under the default failure mode (allow).
			mvc.perform(get("/items")).andExpect(status().isOk());
			mvc.perform(get("/items").param("items", "a")).andExpect(status().isTooManyRequests());
		});
	}

	@Test
	void aPlanResolverOrAClientIpResolverThatThrowsNeverMakesA500() {
		application()
			.withBean(RateLimitPlanResolver.class, () -> (request) -> {
				throw new IllegalStateException("the plans database is down");
			})
			.withBean(ClientIpResolver.class, () -> (request) -> {
				throw new IllegalStateException("no address today");
			})
			.withPropertyValues("ratelimit.plans.pro.by-address.limit=3", "ratelimit.plans.free.by-address.limit=2",
					"ratelimit.default-plan=free")
			.run((context) -> {
				MockMvc mvc = MockMvcBuilders.webAppContextSetup(context).build();
				// The default plan's limit, keyed by the connection's peer.
				mvc.perform(get("/by-address")).andExpect(status().isOk());
				mvc.perform(get("/by-address")).andExpect(status().isOk());
				mvc.perform(get("/by-address")).andExpect(status().isTooManyRequests());
			});
	}

	/** A cost computed by something that fails on the server's side, as a pricing bean whose database is down. */
	public static long failingCost() {
		throw new IllegalStateException("the pricing service is down");
	}

	/** A principal whose name cannot be had, as a lazily loaded entity's might. */
	public static java.security.Principal throwingPrincipal() {
		return () -> {
			throw new IllegalStateException("could not initialize proxy - no Session");
		};
	}

	@RestController
	static class KeyedController {

		@RateLimited(name = "keyed", limit = 2, window = "10000d", key = "#request.getParameter('k')")
		@GetMapping("/keyed")
		String keyed() {
			return "ok";
		}

		@RateLimited(name = "array", limit = 2, window = "10000d", key = "#request.getParameterValues('k')")
		@GetMapping("/array")
		String array() {
			return "ok";
		}

		@RateLimited(name = "whole-request", limit = 2, window = "10000d", key = "#request")
		@GetMapping("/whole-request")
		String wholeRequest() {
			return "ok";
		}

		@RateLimited(name = "throwing", limit = 2, window = "10000d", key = "#request.getParameter('k') == null ? null : T(io.github.ratelimit.integration.BadInputIntegrationTests).throwingPrincipal()")
		@GetMapping("/throwing")
		String throwing() {
			return "ok";
		}

		@RateLimited(name = "typed", limit = 2, window = "10000d", key = "#id")
		@GetMapping("/typed")
		String typed(@org.springframework.web.bind.annotation.RequestParam long id) {
			return "ok";
		}

		@RateLimited(name = "priced-allow", limit = 2, window = "10000d",
				cost = "T(io.github.ratelimit.integration.BadInputIntegrationTests).failingCost()")
		@GetMapping("/priced-allow")
		String pricedAllow() {
			return "ok";
		}

		@RateLimited(name = "priced-deny", limit = 2, window = "10000d",
				cost = "T(io.github.ratelimit.integration.BadInputIntegrationTests).failingCost()")
		@GetMapping("/priced-deny")
		String pricedDeny() {
			return "ok";
		}

		@RateLimited(name = "priced-local", limit = 2, window = "10000d",
				cost = "T(io.github.ratelimit.integration.BadInputIntegrationTests).failingCost()")
		@GetMapping("/priced-local")
		String pricedLocal() {
			return "ok";
		}

		@RateLimited(name = "items", limit = 5, window = "10000d", cost = "#items.size()")
		@GetMapping("/items")
		String items(@org.springframework.web.bind.annotation.RequestParam(required = false) List<String> items) {
			return "ok";
		}

		@RateLimited(name = "by-address", limit = 2, window = "10000d")
		@GetMapping("/by-address")
		String byAddress() {
			return "ok";
		}

		@RateLimited(name = "costly", limit = 5, window = "10000d", cost = "#request.getParameter('cost')")
		@GetMapping("/costly")
		String costly() {
			return "ok";
		}

	}

}
