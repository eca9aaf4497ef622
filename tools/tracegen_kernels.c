/* tracegen_kernels.c: the kernel table of tracegen_kernels.h, kept apart
 * from the generator because its names are long templates copied from
 * real traces, not logic. */
#include "tracegen_kernels.h"

const tg_kernel_source KERNEL_SOURCE[K_COUNT] = {
    [K_SGEMM_TN] = {"ampere_sgemm_128x64_tn", 128, 32768, "4.740741", "18.962963", "[64, 8, 1]",
                    "[128, 1, 1]", 12},
    [K_SGEMM_NN] = {"ampere_sgemm_128x64_nn", 128, 32768, "4.740741", "18.962963", "[64, 8, 1]",
                    "[128, 1, 1]", 12},
    [K_CUTLASS_GEMM] = {"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_16x4_nn_align4>"
                        "(cutlass_80_tensorop_s1688gemm_128x128_16x4_nn_align4::Params)",
                        224, 65536, "9.481481", "37.925926", "[32, 32, 1]", "[128, 1, 1]", 12},
    [K_RELU] =
        {"void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous "
         "namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, "
         "at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#14}::"
         "operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2> >(int, "
         "at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, "
         "c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()"
         "() const::{lambda()#14}::operator()() const::{lambda(float)#1}, at::detail::Array<"
         "char*, 2>)",
         20, 0, "75.851852", "303.407407", "[8192, 1, 1]", "[128, 1, 1]", 100},
    [K_THRESHOLD] =
        {"void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous "
         "namespace)::threshold_kernel_impl<float>(at::TensorIteratorBase&, float, float)"
         "::{lambda(float, float)#1}, at::detail::Array<char*, 3> >(int, at::native::"
         "(anonymous namespace)::threshold_kernel_impl<float>(at::TensorIteratorBase&, "
         "float, float)::{lambda(float, float)#1}, at::detail::Array<char*, 3>)",
         22, 0, "75.851852", "303.407407", "[8192, 1, 1]", "[128, 1, 1]", 100},
    [K_ADD] =
        {"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
         "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, "
         "at::detail::Array<char*, 3>)",
         24, 0, "303.407407", "1213.629630", "[32768, 1, 1]", "[128, 1, 1]", 100},
    [K_REDUCE_SUM] =
        {"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::"
         "func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()"
         "(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4> >("
         "at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::"
         "sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda("
         "float, float)#1}>, unsigned int, float, 4>)",
         32, 16, "2.370370", "37.925926", "[16, 16, 1]", "[32, 16, 1]", 50},
    [K_LOG_SOFTMAX] =
        {"void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, "
         "float, at::native::(anonymous namespace)::LogSoftMaxForwardEpilogue>(float*, "
         "float const*, int)",
         30, 0, "9.481481", "303.407407", "[1024, 1, 1]", "[1024, 1, 1]", 100},
    [K_LOG_SOFTMAX_BWD] = {"void at::native::(anonymous namespace)::cunn_SoftMaxBackward<4, float, "
                           "float, float, at::native::(anonymous namespace)::"
                           "LogSoftMaxBackwardEpilogue>(float*, float const*, float const*, int)",
                           30, 0, "9.481481", "303.407407", "[1024, 1, 1]", "[1024, 1, 1]", 100},
    [K_NLL] =
        {"void at::native::(anonymous namespace)::nll_loss_forward_reduce_cuda_kernel_2d<float, "
         "float, long>(float*, float*, float const*, long const*, float const*, bool, long, "
         "long, long, long)",
         30, 2048, "0.009259", "0.296296", "[1, 1, 1]", "[1024, 1, 1]", 0},
    [K_NLL_BWD] =
        {"void at::native::(anonymous namespace)::nll_loss_backward_reduce_cuda_kernel_2d<"
         "float, long>(float*, float const*, long const*, float const*, float const*, bool, "
         "int, int, long, long)",
         28, 0, "0.009259", "0.296296", "[1, 1, 1]", "[1024, 1, 1]", 0},
    [K_FILL] = {"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
                "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, "
                "at::detail::Array<char*, 1>)",
                16, 0, "0.009259", "0.037037", "[1, 1, 1]", "[128, 1, 1]", 0},
    [K_MUL] = {"void at::native::vectorized_elementwise_kernel<4, at::native::AUnaryFunctor<float, "
               "float, float, at::native::binary_internal::MulFunctor<float> >, at::detail::Array<"
               "char*, 2> >(int, at::native::AUnaryFunctor<float, float, float, at::native::"
               "binary_internal::MulFunctor<float> >, at::detail::Array<char*, 2>)",
               22, 0, "303.407407", "1213.629630", "[32768, 1, 1]", "[128, 1, 1]", 100},
    [K_FOREACH_ADD] =
        {"void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::"
         "(anonymous namespace)::TensorListMetadata<2>, at::native::(anonymous "
         "namespace)::BinaryOpListAlphaFunctor<float, 2, 2, 0>, std::plus<float>, float>"
         "(at::native::(anonymous namespace)::TensorListMetadata<2>, at::native::"
         "(anonymous namespace)::BinaryOpListAlphaFunctor<float, 2, 2, 0>, std::plus<"
         "float>, float)",
         40, 0, "2.962963", "47.407407", "[320, 1, 1]", "[512, 1, 1]", 50},
    [K_NCCL_ALLREDUCE] = {"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, "
                          "ncclWork*)",
                          96, 0, "0.222222", "3.777778", "[24, 1, 1]", "[544, 1, 1]", 0},
};
