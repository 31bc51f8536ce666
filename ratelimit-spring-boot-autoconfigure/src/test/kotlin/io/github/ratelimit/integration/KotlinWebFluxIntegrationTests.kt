package io.github.ratelimit.integration

import io.github.ratelimit.TimeSource
import io.github.ratelimit.conformance.MutableTimeSource
import io.github.ratelimit.annotation.RateLimited
import java.net.URI
import java.net.http.HttpClient
import java.net.http.HttpRequest
import java.net.http.HttpResponse
import java.util.concurrent.atomic.AtomicInteger
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.flow
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.BeforeAll
import org.junit.jupiter.api.Test
import org.springframework.boot.SpringApplication
import org.springframework.boot.WebApplicationType
import org.springframework.boot.autoconfigure.EnableAutoConfiguration
import org.springframework.context.ConfigurableApplicationContext
import org.springframework.context.annotation.Configuration
import org.springframework.context.annotation.Import
import org.springframework.security.config.web.server.ServerHttpSecurity
import org.springframework.security.web.server.SecurityWebFilterChain
import org.springframework.context.annotation.Bean
import org.springframework.web.bind.annotation.GetMapping
import org.springframework.web.bind.annotation.PathVariable
import org.springframework.web.bind.annotation.RestController

/**
 * Kotlin `suspend` functions and `Flow` on WebFlux, booted as a user's application would be: decided when the
 * coroutine runs or the flow is collected, for the request whose Reactor context the coroutine carries, and a
 * rejected call never runs the function.
 */
class KotlinWebFluxIntegrationTests {

    private val client: HttpClient = HttpClient.newHttpClient()

    companion object {

        /**
         * One application for every test, started once (each start costs seconds): each test uses a path, a policy,
         * a counter and client addresses that no other test uses, so none sees another's counts.
         */
        private lateinit var shared: ConfigurableApplicationContext

        @JvmStatic
        @BeforeAll
        fun startSharedApplication() {
            val application = SpringApplication(KotlinApplication::class.java)
            application.setWebApplicationType(WebApplicationType.REACTIVE)
            shared = application.run("--server.port=0", "--ratelimit.store=memory",
                "--ratelimit.client-ip.trusted-proxies=127.0.0.1/32")
        }

        @JvmStatic
        @AfterAll
        fun stopSharedApplication() {
            if (this::shared.isInitialized) {
                shared.close()
            }
        }

    }

    @Test
    fun aSuspendFunctionAdmitsItsLimitThenAnswersTheProblemWithoutRunning() {
        val app = shared
        val calls = app.getBean(Calls::class.java).orders
        val base = base(app)
        for (remaining in 1 downTo 0) {
            val admitted = get("$base/users/alice/orders", "198.51.100.1")
            assertThat(admitted.statusCode()).isEqualTo(200)
            assertThat(admitted.body()).isEqualTo("orders of alice")
            assertThat(admitted.headers().firstValue("RateLimit-Remaining")).hasValue(remaining.toString())
        }
        val rejected = get("$base/users/alice/orders", "198.51.100.1")
        assertThat(rejected.statusCode()).isEqualTo(429)
        assertThat(rejected.headers().firstValue("Retry-After")).isPresent()
        assertThat(rejected.body()).contains("\"violated-policies\":[\"kotlin-orders\"]")
        assertThat(calls.get()).`as`("the rejected call never ran the function").isEqualTo(2)
        assertThat(get("$base/users/bob/orders", "198.51.100.1").statusCode()).isEqualTo(200)
    }

    @Test
    fun aSuspendFunctionIsKeyedByItsOwnRequestsClientAddress() {
        val app = shared
        val base = base(app)
        assertThat(get("$base/profile", "198.51.100.2").statusCode()).isEqualTo(200)
        assertThat(get("$base/profile", "198.51.100.2").statusCode()).isEqualTo(429)
        assertThat(get("$base/profile", "198.51.100.3").statusCode())
            .`as`("another client's address: the coroutine found its request").isEqualTo(200)
    }

    @Test
    fun aFlowIsDecidedWhenCollectedAndRejectedBeforeItRuns() {
        val app = shared
        val calls = app.getBean(Calls::class.java).events
        val base = base(app)
        val admitted = get("$base/events", "198.51.100.4")
        assertThat(admitted.statusCode()).isEqualTo(200)
        assertThat(admitted.body()).isEqualTo("onetwothree")
        assertThat(get("$base/events", "198.51.100.4").statusCode()).isEqualTo(429)
        assertThat(calls.get()).`as`("the rejected flow was never collected").isEqualTo(1)
        assertThat(get("$base/events", "198.51.100.5").statusCode()).isEqualTo(200)
    }

    private fun base(app: ConfigurableApplicationContext) =
        "http://127.0.0.1:" + app.environment.getProperty("local.server.port")

    private fun get(uri: String, client: String): HttpResponse<String> =
        this.client.send(HttpRequest.newBuilder(URI.create(uri)).header("X-Forwarded-For", client).build(),
            HttpResponse.BodyHandlers.ofString())

    @Configuration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    @Import(KotlinController::class, Calls::class)
    open class KotlinApplication {

        /** Mid-minute and still: two requests never fall into two windows of a one-minute fixed window. */
        @Bean
        open fun rateLimitTimeSource(): TimeSource = MutableTimeSource.at("2030-01-01T00:00:30Z")

        /** Spring Security is on this module's test class path: everything is open. */
        @Bean
        open fun openChain(http: ServerHttpSecurity): SecurityWebFilterChain =
            http.authorizeExchange { it.anyExchange().permitAll() }.csrf { it.disable() }.build()

    }

    class Calls {

        val orders = AtomicInteger()

        val events = AtomicInteger()

    }

    /** Open, as the kotlin-spring compiler plugin would make it, so that it can be proxied. */
    @RestController
    open class KotlinController(private val calls: Calls) {

        @GetMapping("/users/{userId}/orders")
        @RateLimited(name = "kotlin-orders", limit = 2, window = "1m", key = "#userId")
        open suspend fun orders(@PathVariable userId: String): String {
            delay(1) // suspends for real: resumed on another thread
            calls.orders.incrementAndGet()
            return "orders of $userId"
        }

        @GetMapping("/profile")
        @RateLimited(name = "kotlin-profile", limit = 1, window = "1m", key = "#clientIp")
        open suspend fun profile(): String = "profile"

        @GetMapping("/events")
        @RateLimited(name = "kotlin-events", limit = 1, window = "1m")
        open fun events(): Flow<String> = flow {
            calls.events.incrementAndGet()
            emit("one")
            emit("two")
            emit("three")
        }

    }

}
