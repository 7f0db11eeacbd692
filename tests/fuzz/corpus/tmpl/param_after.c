{{! What the call's success changes for one parameter. }}
{{#sh_callback}}
    if (rc == CUDA_SUCCESS)
        {{cname}}_given = 1;
{{/sh_callback}}
